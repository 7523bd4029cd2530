"""Learning while coding, the same on every machine (arithmetics 2 and 4): after each block of coded steps,
encoder and decoder take the same Adam step on the block just coded and rebuild the exact
predictor from the new weights, so both code the next block with the same integers.

The step runs the float model's forward and backward by hand in lmzip.arith.detfloat's deterministic
float64 (every sum and product over quantized integers, every other operation a single IEEE op in
a fixed order), on float64 master weights. The block layout depends only on the segment lengths
and the block length. The model is the same function as lmzip.models.model's up to those quantizations
(and GELU in its tanh form); the coder never sees these floats, only the exact predictor built
from them by lmzip.arith.exact's rules.
"""

from __future__ import annotations

import copy
import ctypes
import functools
import math

import numpy as np
import torch
from torch import Tensor

from lmzip.arith import detfloat, exact
from lmzip.arith.detfloat import (
    dmm,
    dsum,
    embedding_back,
    gelu,
    layer_norm,
    layer_norm_back,
    linear_back,
    sigmoid,
    softmax,
    softmax_grad,
    tanh,
)
from lmzip.arith.versions import ARITHMETICS
from lmzip.coding.settings import AdaptConfig
from lmzip.errors import LmzipError
from lmzip.models.model import GPT, VARIANTS, LSTMModel, Predictor, config_to_dict
from lmzip.models.qmodel import ARITH, ROT_BITS, exact_predictor

BETA1, BETA2, EPS = 0.9, 0.999, 1e-8  # Adam's defaults, as torch.optim.Adam


@functools.cache  # once per process: the setting is the process's
def _keep_heap() -> None:
    """Serve large arrays from the heap and keep freed memory for the next step: each learning step
    allocates and frees the same arrays of tens of MB, which glibc otherwise maps afresh (mmap above
    32 MB) and the kernel zeroes and faults in page by page (19% of gpt-wide's learning compress
    speed). Elsewhere than glibc this does nothing."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-4, 0)  # M_MMAP_MAX: no mmap for large blocks
        libc.mallopt(-1, -1)  # M_TRIM_THRESHOLD: never return the heap's top to the system
    except (OSError, AttributeError):
        pass


def check_adaptable(predictor: Predictor) -> None:
    """Refuse, in one line, a model whose architecture the learner's hand-written gradients do not cover
    (the variants of imported checkpoints: learned positions, biases, RMSNorm, SwiGLU, untied heads)."""
    if isinstance(predictor, GPT) and VARIANTS.keys() & config_to_dict(predictor.config).keys():
        raise LmzipError("--adapt supports lmzip's own Transformer and LSTM only, not imported GPT-2/Llama "
                         "architectures; compress without --adapt (--mix works)")


class Learner:
    """A private float64 copy of the model that learns from every coded block, and its exact predictor."""

    def __init__(self, predictor: Predictor, cfg: AdaptConfig, device: str = "cpu", arith: int = ARITH):
        check_adaptable(predictor)
        with torch.inference_mode():
            self.module = copy.deepcopy(predictor).cpu().double().requires_grad_(False)
        self.params = dict(self.module.named_parameters())  # updated in place; tied weights once
        self.m = {n: torch.zeros_like(p) for n, p in self.params.items()}
        self.v = {n: torch.zeros_like(p) for n, p in self.params.items()}
        self.b1pow = self.b2pow = 1.0
        self.cfg, self.device, self.arith = cfg, device, arith
        self.grads = gpt_grads if isinstance(self.module, GPT) else lstm_grads
        self.pred = exact_predictor(self.module, device, arith)
        _keep_heap()

    def due(self, t: int) -> bool:
        """Whether a learning step follows coded step ``t``."""
        return (t + 1) % self.cfg.steps == 0

    def learn(self, toks: np.ndarray, lengths: np.ndarray, t: int) -> None:
        """One step on steps t-block+1..t of every segment that has tokens there; rebuilds ``pred``."""
        lo = t + 1 - self.cfg.steps
        rows = np.flatnonzero(lengths > lo)
        y = toks[rows, lo : t + 1]
        x = np.empty_like(y)
        x[:, 1:] = y[:, :-1]
        x[:, 0] = toks[rows, lo - 1] if lo > 0 else self.pred.bos
        mask = (lo + np.arange(self.cfg.steps))[None, :] < lengths[rows, None]
        w = torch.from_numpy(mask.reshape(-1).astype(np.float64) / float(mask.sum()))  # the mean over coded tokens
        with detfloat.products(2 if ARITHMETICS[self.arith].quant.int8 else 1):  # 4 and 7 learn with int8 limbs
            grads = self.grads(self.module, torch.from_numpy(x), torch.from_numpy(y).reshape(-1), w)
        self._adam(grads)
        self.pred = exact_predictor(self.module, self.device, self.arith)

    def _adam(self, grads: dict[str, Tensor]) -> None:
        """torch.optim.Adam's update, one IEEE operation per kernel in this order."""
        self.b1pow *= BETA1
        self.b2pow *= BETA2
        step = float(np.float32(self.cfg.lr)) / (1.0 - self.b1pow)
        inv_bc2 = 1.0 / (1.0 - self.b2pow)
        for n, p in self.params.items():
            g, m, v = grads[n], self.m[n], self.v[n]
            m.mul_(BETA1).add_(g * (1.0 - BETA1))
            v.mul_(BETA2).add_(g * g * (1.0 - BETA2))
            denom = exact.sqrt(v * inv_bc2) + EPS
            p.sub_(exact.div(m * step, denom))


def _head_grads(m: Predictor, h: Tensor, y: Tensor, w: Tensor, grads: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
    """The final norm and tied output layer with the mean cross-entropy: dh and the head's dW."""
    V = m.config.vocab_size
    W = m.wte.weight[:V]
    hf, saved = layer_norm(h, m.ln_f.weight, m.ln_f.bias)
    g = softmax_grad(dmm(hf, W.t()), y, w)  # d(mean cross-entropy)/d logits
    dhf, dW = linear_back(g, hf, W)
    dh, grads["ln_f.weight"], grads["ln_f.bias"] = layer_norm_back(dhf, saved)
    return dh, dW


def _embedding_grads(m: Predictor, x: Tensor, dx: Tensor, dW: Tensor, grads: dict[str, Tensor]) -> None:
    dE = embedding_back(x.reshape(-1), dx, m.wte.weight.shape[0])
    dE[: dW.shape[0]] += dW
    grads["wte.weight"] = dE


# ---------------------------------------------------------------------------- Transformer

_ROTARY: dict[tuple[int, int], tuple[Tensor, Tensor]] = {}


def _rotary(n: int, hd: int) -> tuple[Tensor, Tensor]:
    """The exact rotary tables as float64 cos/sin (the coder's own, divided by 2^ROT_BITS: exact)."""
    if (n, hd) not in _ROTARY:
        cos, sin = exact.rotary_table(n, hd, ROT_BITS)
        _ROTARY[n, hd] = cos * 2.0**-ROT_BITS, sin * 2.0**-ROT_BITS
    return _ROTARY[n, hd]


def _rotate(x: Tensor, cs: Tensor, sn: Tensor, back: bool = False) -> Tensor:
    """Rotary rotation of pairs (x1, x2) of x [..., T, hd]; ``back``: the transposed rotation (its gradient)."""
    x1, x2 = x.chunk(2, dim=-1)
    if back:
        return torch.cat([x1 * cs + x2 * sn, x2 * cs - x1 * sn], dim=-1)
    return torch.cat([x1 * cs - x2 * sn, x1 * sn + x2 * cs], dim=-1)


def gpt_grads(m: GPT, x: Tensor, y: Tensor, w: Tensor) -> dict[str, Tensor]:
    """Gradients of the mean cross-entropy of y [R*T] after inputs x [R, T] (weights w per target)."""
    c = m.config
    R, T = x.shape
    N, C, H, Hkv = R * T, c.n_embd, c.n_head, c.n_kv_head
    hd, G = C // H, H // Hkv
    scale = 1.0 / math.sqrt(hd)
    cos, sin = _rotary(c.context, hd)
    cs, sn = cos[:T], sin[:T]
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    h = m.wte.weight.index_select(0, x.reshape(-1))  # [N, C]
    saved = []
    for b in m.blocks:
        a_in, ln1 = layer_norm(h, b.ln1.weight, b.ln1.bias)
        q, k, v = dmm(a_in, b.attn.qkv.weight.t()).split([H * hd, Hkv * hd, Hkv * hd], -1)
        q = _rotate(q.reshape(R, T, H, hd).transpose(1, 2), cs, sn)  # [R, H, T, hd]
        k = _rotate(k.reshape(R, T, Hkv, hd).transpose(1, 2), cs, sn).repeat_interleave(G, dim=1)
        v = v.reshape(R, T, Hkv, hd).transpose(1, 2).repeat_interleave(G, dim=1)
        p = softmax(dmm(q, k.transpose(-1, -2)) * scale, causal)  # [R, H, T, T]
        o = dmm(p, v).transpose(1, 2).reshape(N, C)
        h = h + dmm(o, b.attn.proj.weight.t())
        m_in, ln2 = layer_norm(h, b.ln2.weight, b.ln2.bias)
        u, du = gelu(dmm(m_in, b.mlp.up.weight.t()))
        h = h + dmm(u, b.mlp.down.weight.t())
        saved.append((a_in, ln1, q, k, v, p, o, m_in, ln2, u, du))
    grads: dict[str, Tensor] = {}
    dh, dW = _head_grads(m, h, y, w, grads)
    for i in reversed(range(len(m.blocks))):
        b, pre = m.blocks[i], f"blocks.{i}."
        a_in, ln1, q, k, v, p, o, m_in, ln2, u, du = saved[i]
        dg, grads[pre + "mlp.down.weight"] = linear_back(dh, u, b.mlp.down.weight)
        dm, grads[pre + "mlp.up.weight"] = linear_back(dg * du, m_in, b.mlp.up.weight)
        dx, grads[pre + "ln2.weight"], grads[pre + "ln2.bias"] = layer_norm_back(dm, ln2)
        dh = dh + dx
        do, grads[pre + "attn.proj.weight"] = linear_back(dh, o, b.attn.proj.weight)
        do = do.reshape(R, T, H, hd).transpose(1, 2)
        dp = dmm(do, v.transpose(-1, -2))
        dv = dmm(p.transpose(-1, -2), do)
        ds = p * (dp - dsum(p * dp, -1)) * scale
        dq = _rotate(dmm(ds, k), cs, sn, back=True)
        dk = dmm(ds.transpose(-1, -2), q)
        dk = _rotate(dsum(dk.reshape(R, Hkv, G, T, hd), 2)[:, :, 0], cs, sn, back=True)  # the group's heads
        dv = dsum(dv.reshape(R, Hkv, G, T, hd), 2)[:, :, 0]
        dqkv = torch.cat([t.transpose(1, 2).reshape(N, -1) for t in (dq, dk, dv)], dim=-1)
        da, grads[pre + "attn.qkv.weight"] = linear_back(dqkv, a_in, b.attn.qkv.weight)
        dx, grads[pre + "ln1.weight"], grads[pre + "ln1.bias"] = layer_norm_back(da, ln1)
        dh = dh + dx
    _embedding_grads(m, x, dh, dW, grads)
    return grads


# ---------------------------------------------------------------------------- LSTM


def lstm_grads(m: LSTMModel, x: Tensor, y: Tensor, w: Tensor) -> dict[str, Tensor]:
    """As gpt_grads, for the LSTM (from a zero state at the block's start, as in training)."""
    R, T = x.shape
    N, C, lstm = R * T, m.config.n_embd, m.lstm
    inp = m.wte.weight.index_select(0, x.reshape(-1))  # [N, C]
    saved = []
    for n in range(m.config.n_layer):
        wih, whh = getattr(lstm, f"weight_ih_l{n}"), getattr(lstm, f"weight_hh_l{n}")
        bias = getattr(lstm, f"bias_ih_l{n}") + getattr(lstm, f"bias_hh_l{n}")
        xp = (dmm(inp, wih.t()) + bias).reshape(R, T, 4 * C)
        recur = detfloat.by(whh.t())  # the same weights at every step: quantized once
        h = torch.zeros(R, C, dtype=torch.float64)
        cell = torch.zeros(R, C, dtype=torch.float64)
        prevs, outs, steps = [], [], []
        for t in range(T):
            z = xp[:, t] + recur(h)
            i, f, o = sigmoid(z[:, :C]), sigmoid(z[:, C : 2 * C]), sigmoid(z[:, 3 * C :])
            g = tanh(z[:, 2 * C : 3 * C])  # torch's gate order: i, f, g, o
            prev_c, prev_h = cell, h
            cell = f * cell + i * g
            tc = tanh(cell)
            h = o * tc
            steps.append((i, f, g, o, prev_c, tc))
            prevs.append(prev_h)
            outs.append(h)
        saved.append((inp, torch.stack(prevs, 1).reshape(N, C), steps))
        inp = torch.stack(outs, 1).reshape(N, C)
    grads: dict[str, Tensor] = {}
    dh_all, dW = _head_grads(m, inp, y, w, grads)
    for n in reversed(range(m.config.n_layer)):
        wih, whh = getattr(lstm, f"weight_ih_l{n}"), getattr(lstm, f"weight_hh_l{n}")
        x_in, h_prev, steps = saved[n]
        dh_all = dh_all.reshape(R, T, C)
        dz = torch.empty(R, T, 4 * C, dtype=torch.float64)
        dh_next = torch.zeros(R, C, dtype=torch.float64)
        dc_next = torch.zeros(R, C, dtype=torch.float64)
        back = detfloat.by(whh)
        for t in reversed(range(T)):
            i, f, g, o, prev_c, tc = steps[t]
            dh = dh_all[:, t] + dh_next
            dc = dc_next + dh * o * (1.0 - tc * tc)
            dz[:, t, :C] = dc * g * i * (1.0 - i)
            dz[:, t, C : 2 * C] = dc * prev_c * f * (1.0 - f)
            dz[:, t, 2 * C : 3 * C] = dc * i * (1.0 - g * g)
            dz[:, t, 3 * C :] = dh * tc * o * (1.0 - o)
            dc_next = dc * f
            dh_next = back(dz[:, t])
        dz = dz.reshape(N, 4 * C)
        grads[f"lstm.weight_hh_l{n}"] = dmm(dz.t(), h_prev)
        dh_all, grads[f"lstm.weight_ih_l{n}"] = linear_back(dz, x_in, wih)
        grads[f"lstm.bias_ih_l{n}"] = grads[f"lstm.bias_hh_l{n}"] = dsum(dz, 0)[0]
    _embedding_grads(m, x, dh_all, dW, grads)
    return grads
