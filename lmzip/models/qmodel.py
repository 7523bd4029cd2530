"""Exact predictors: the trained Transformer and LSTM evaluated in the integer arithmetic of
lmzip.arith.exact, so that their coder counts are the same on every machine (the arithmetics of
lmzip.arith.versions: how finely the matrix products' operands are quantized, and the window's rule).

Built from a float Predictor (the stored bf16 weights) by quantization rules that are themselves
exact, so the model file alone decides every count. ``step`` feeds one token per stream and
returns int64 counts [B, V] summing to ``exact.count_total(V)``: the coder's input, directly.
Because every operation is exact, a pass over T new positions gives the very integers T single
steps give; the Transformer uses that to re-prime its window in one pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from lmzip.arith import exact, kernels
from lmzip.arith.exact import FRAC, QLinear, QNormLinear, apply_table, fixed
from lmzip.arith.versions import ARITHMETICS, COUNTS, Quant
from lmzip.models.model import GPT, LSTMModel, Predictor

LOGIT_BITS = 6  # exact.LOGIT_STEPS = 2^6
ROT_BITS = 14  # rotary tables in 1/2^14
QK_BITS = 10  # queries, keys and values in 1/2^10, clamped to +-2^20 (real +-1024)
QK_CLAMP = float(1 << 20)
ATT_BITS = 16  # attention weights in 1/2^16 of the largest
NARROW = float((1 << 15) - 1)  # caches start as int16 (the shipped models' keys and values stay below ~14,000):
# attention streams half float32's memory; a state widens to float32 once a value would not fit (_Wide)
assert LOGIT_BITS == exact.LOGIT_STEPS.bit_length() - 1
ARITH = COUNTS  # what new files use (lmzip.arith.versions); arithmetic 1 and 3 still decode
# Arithmetic 6 (7 learning while coding) is arithmetic 3's (4's) integers but for the Transformer's full window:
# it drops its oldest half and moves the rest back, their keys rotated back by as many positions (ExactGPT._shift),
# where 3 re-primed the half it keeps in a pass of the network (about a third more products on a long segment;
# enwik6 at -4: 197,909 bytes against 197,918, compress 22.3 against 16.0 KB/s, decompress 18.6 against 14.9).
# A model of learned positions re-primes in every arithmetic: its keys hold no rotation to undo.


class ExactPredictor:
    """The interface the codec codes with: ``start(B)``, then ``step(tokens [B]) -> counts [B, V]``."""

    vocab: int
    bos: int

    def start(self, batch: int) -> Any:
        """A fresh state for ``batch`` independent streams."""
        raise NotImplementedError

    def step(self, tokens: Tensor, state: Any) -> tuple[Tensor, Any]:
        """Feed one token per stream; return int64 counts [B, V] for the next token and the state."""
        raise NotImplementedError


def exact_predictor(model: Predictor, device: str = "cpu", arith: int = ARITH) -> ExactPredictor:
    """The exact counterpart of a float predictor (the Transformer or the LSTM) in arithmetic ``arith``."""
    version = ARITHMETICS[arith]
    quant = version.quant
    with torch.inference_mode():
        if isinstance(model, GPT):
            return ExactGPT(model, device, quant, shift=version.shifts and model.config.pos == "rope")
        if isinstance(model, LSTMModel):
            return ExactLSTM(model, device, quant)
    raise TypeError(f"no exact form for {type(model).__name__}")


def _head(model: Predictor, quant: Quant) -> QNormLinear:
    c = model.config
    w = model.wte.weight[: c.vocab_size] if getattr(c, "tied", True) else model.lm_head.weight
    return QNormLinear(model.ln_f.weight, getattr(model.ln_f, "bias", None), w, out_bits=LOGIT_BITS, quant=quant,
                       rms=getattr(c, "norm", "layer") == "rms")


def _norm_linear(ln, weight: Tensor, bias: Tensor | None, quant: Quant) -> QNormLinear:
    """A norm (LayerNorm or RMSNorm) folded into the linear layer it feeds."""
    rms = not hasattr(ln, "bias")  # nn.RMSNorm has no bias
    return QNormLinear(ln.weight, None if rms else ln.bias, weight, bias=bias, rms=rms, quant=quant)


# ---------------------------------------------------------------------------- Transformer


@dataclass
class _Layer:
    qkv: QNormLinear  # ln1 folded in
    proj: QLinear
    up: QNormLinear  # ln2 folded in (SwiGLU: the gate's rows, then the up rows)
    down: QLinear


def _layer(b, q: Quant, device: str) -> _Layer:
    up_w, up_b = b.mlp.up.weight, b.mlp.up.bias
    if b.mlp.kind == "swiglu":
        up_w = torch.cat([b.mlp.gate.weight, up_w])
        up_b = None if up_b is None else torch.cat([b.mlp.gate.bias, up_b])
    return _Layer(_norm_linear(b.ln1, b.attn.qkv.weight, b.attn.qkv.bias, q).to(device),
                  QLinear(b.attn.proj.weight, b.attn.proj.bias, in_bits=QK_BITS, quant=q).to(device),
                  _norm_linear(b.ln2, up_w, up_b, q).to(device),
                  QLinear(b.mlp.down.weight, b.mlp.down.bias, quant=q).to(device))


SHIFT_ROWS = 8  # rows whose keys one step of the window's shift rotates back (float64 temporaries of ~1 MiB)
HEAD_POSITIONS = 64  # positions whose counts the encoder's passes compute at once (16 rows x 4: 2 MiB of logits; 256
# held 38 MiB more at the default's peak on 1.2 MB of text, two groups, at the same speed)
REPRIME_POSITIONS = 512  # positions of one re-priming pass (128 rows x 128 at once held ~650 MiB; 512 at
# once is as fast as 2,048 and held ~90 MiB less over two groups of 2 MB of Chinese text)


@dataclass
class ExactGPTState:
    """Caches per layer, keys [B, Hkv, W, hd] and values [B, Hkv, hd, W] (integers in 1/2^QK_BITS, at most 2^20:
    int16 while every value fits, else float32, which holds them exactly; attention reads both along their last
    dim), next position, inputs seen."""

    k: list[Tensor]
    v: list[Tensor]
    hist: Tensor  # [B, W]
    pos: int = 0

    def widen(self) -> None:
        """int16 caches to float32: the same integers (a value about to be written did not fit)."""
        self.k, self.v = [k.float() for k in self.k], [v.float() for v in self.v]


class _Wide(Exception):
    """A key or value beyond int16 was about to be written into an int16 cache: widen, then redo the pass."""


def _narrow(cache: Tensor) -> float:
    """The largest magnitude a cache holds exactly: int16's, or any (float32, up to QK_CLAMP)."""
    return NARROW if cache.dtype == torch.int16 else math.inf


class ExactGPT(ExactPredictor):
    """The Transformer of lmzip.models.model in exact arithmetic; a full window shifts (arithmetic 6, 7) or
    re-primes as the float model's does (1-4)."""

    def __init__(self, m: GPT, device: str, quant: Quant, shift: bool = True):
        c = self.cfg = m.config
        self.shift = shift  # a full window shifts (arithmetic 6, 7 with rotary positions), else it re-primes
        self.vocab, self.bos, self.device = c.vocab_size, m.bos, device
        self.hd = c.n_embd // c.n_head
        self.emb = fixed(m.wte.weight).to(device)  # [V+1, C] (or [V, C] when the checkpoint names its BOS)
        self.wpe = fixed(m.wpe.weight).to(device) if c.pos == "learned" else None  # [W, C]
        self.layers = [_layer(b, quant, device) for b in m.blocks]
        self.head = _head(m, quant).to(device)
        base = int(c.rope_base) if float(c.rope_base).is_integer() else c.rope_base  # the cached table's key
        cos, sin = exact.rotary_table(c.context, self.hd, ROT_BITS, base)
        self.cos, self.sin = cos.to(device), sin.to(device)
        # scores q.k in 1/2^(2 QK_BITS), scaled by 1/sqrt(hd), to 1/LOGIT_STEPS nat: one float64 constant
        self.score_scale = float(exact.LOGIT_STEPS) / float(1 << (2 * QK_BITS)) / math.sqrt(self.hd)  # IEEE ops

    def start(self, batch: int) -> ExactGPTState:
        c = self.cfg
        narrow = exact.FAST and self.device == "cpu" and self.wpe is None  # the compiled cache step checks the range
        dtype = torch.int16 if narrow else torch.float32

        def caches(*shape):
            return [torch.zeros(shape, dtype=dtype, device=self.device) for _ in range(c.n_layer)]

        hist = torch.zeros(batch, c.context, dtype=torch.long, device=self.device)
        return ExactGPTState(caches(batch, c.n_kv_head, c.context, self.hd),
                             caches(batch, c.n_kv_head, self.hd, c.context), hist)

    def _rotate(self, x: Tensor, p0: int) -> Tensor:
        """x [B, heads, T, hd] at positions p0.. -> rotated, in 1/2^QK_BITS, clamped."""
        if self.wpe is not None:  # learned positions: no rotation
            return torch.round(x / (1 << (FRAC - QK_BITS))).clamp(-QK_CLAMP, QK_CLAMP)
        T = x.shape[2]
        cs, sn = self.cos[p0 : p0 + T], self.sin[p0 : p0 + T]
        x1, x2 = x.chunk(2, dim=-1)
        y = torch.cat([x1 * cs - x2 * sn, x1 * sn + x2 * cs], dim=-1)  # exact: < 2^53
        return torch.round(y / (1 << (ROT_BITS + FRAC - QK_BITS))).clamp(-QK_CLAMP, QK_CLAMP)

    def _cache(self, layer: _Layer, x: Tensor, st: ExactGPTState, i: int, p0: int) -> Tensor:
        """Write the k, v of T new positions p0.. (x [B, T, C]) into layer ``i``'s cache; returns their q
        [B, H, T, hd], rotated as the keys."""
        c, hd = self.cfg, self.hd
        B, T, _ = x.shape
        H, Hkv = c.n_head, c.n_kv_head
        y = layer.qkv(x)
        if exact.FAST and x.device.type == "cpu" and self.wpe is None:  # the same integers, one compiled pass
            q, fits = kernels.cache_qkv(y.contiguous().numpy(), H, Hkv, self.cos.numpy(), self.sin.numpy(), p0,
                                        float(1 << (ROT_BITS + FRAC - QK_BITS)), float(1 << (FRAC - QK_BITS)),
                                        QK_CLAMP, st.k[i].numpy(), st.v[i].numpy(), _narrow(st.k[i]))
            if not fits:
                raise _Wide
            return torch.from_numpy(q)
        q, k, v = y.split([H * hd, Hkv * hd, Hkv * hd], -1)
        k = self._rotate(k.view(B, T, Hkv, hd).transpose(1, 2), p0)
        v = torch.round(v.view(B, T, Hkv, hd).transpose(1, 2) / (1 << (FRAC - QK_BITS))).clamp(-QK_CLAMP, QK_CLAMP)
        if max(float(k.abs().max()), float(v.abs().max())) > _narrow(st.k[i]):
            raise _Wide
        st.k[i][:, :, p0 : p0 + T] = k
        st.v[i][..., p0 : p0 + T] = v.transpose(-1, -2)
        return self._rotate(q.view(B, T, H, hd).transpose(1, 2), p0)

    def _attend(self, layer: _Layer, x: Tensor, st: ExactGPTState, i: int, p0: int) -> Tensor:
        """Attention of T new positions p0.. (x [B, T, C]) over the cache; writes their k, v."""
        c, hd = self.cfg, self.hd
        B, T, _ = x.shape
        H, Hkv = c.n_head, c.n_kv_head
        q = self._cache(layer, x, st, i, p0)
        L = p0 + T
        G = H // Hkv  # query heads per kv head (head h reads kv head h // G)
        if exact.FAST and x.device.type == "cpu":  # the same integers, one compiled pass
            tab = exact._exp_table(ATT_BITS, "cpu").numpy()
            o = kernels.attend_causal(q.reshape(B, Hkv, G, T, hd).contiguous().numpy(), st.k[i].numpy(),
                                      st.v[i].numpy(), p0, self.score_scale, tab)
            o = torch.from_numpy(o).view(B, H, T, hd).transpose(1, 2).reshape(B, T, H * hd)
            return layer.proj(o)
        qg = q.reshape(B, Hkv, G * T, hd)
        scores = torch.round(qg @ st.k[i][:, :, :L].double().transpose(-1, -2) * self.score_scale)  # [B, Hkv, G*T, L]
        mask = None
        if T > 1:
            qpos = p0 + torch.arange(T, device=x.device).repeat(G)
            mask = torch.arange(L, device=x.device)[None, :] <= qpos[:, None]
        w = exact.softmax_weights(scores, mask, ATT_BITS)
        o = torch.round((w @ st.v[i][..., :L].double().transpose(-1, -2)) / w.sum(-1, keepdim=True))  # exact sums
        o = o.view(B, Hkv, G, T, hd).reshape(B, H, T, hd).transpose(1, 2).reshape(B, T, H * hd)
        return layer.proj(o)

    def _forward(self, idx: Tensor, st: ExactGPTState, p0: int, out: bool = True) -> Tensor | None:
        """Positions p0.. of every stream (idx [B, T]); returns their hidden states [B, T, C] (``out``
        False: only the caches are filled, and the last layer stops at its k, v, all that is kept)."""
        x = self.emb[idx]
        if self.wpe is not None:
            x = x + self.wpe[p0 : p0 + idx.shape[1]]  # integers: exact
        for i, layer in enumerate(self.layers):
            if not out and i == len(self.layers) - 1:
                self._cache(layer, x, st, i, p0)
                return None
            x = x + self._attend(layer, x, st, i, p0)
            x = x + layer.down(self._mlp(layer.up(x)))
        return x

    def _mlp(self, u: Tensor) -> Tensor:
        """The MLP's non-linearity on the up projection (fixed point in, fixed point out)."""
        kind = self.cfg.mlp
        if kind != "swiglu":
            return apply_table(kind, u)
        g, u = u.chunk(2, dim=-1)
        # silu(g) * u in 1/2^(2 FRAC): one correctly rounded product (exact below 2^53), a power-of-two division
        return torch.round(apply_table("silu", g) * u / (1 << FRAC))

    def _reprime_if_full(self, st: ExactGPTState) -> None:
        """Window full: shift it by half (arithmetic 6, 7), or restart it as [BOS, last W/2-1 inputs] in
        one pass (arithmetic 1-4)."""
        ctx = self.cfg.context
        if st.pos == ctx and self.shift:
            self._shift(st, ctx // 2)
        elif st.pos == ctx:
            keep = ctx // 2
            idx = st.hist[:, -keep:].clone()
            idx[:, 0] = self.bos
            rows = max(1, REPRIME_POSITIONS // keep)  # a few rows a pass: the same integers in bounded memory
            for a in range(0, idx.shape[0], rows):
                part = ExactGPTState([k[a : a + rows] for k in st.k], [v[a : a + rows] for v in st.v],
                                     st.hist[a : a + rows])
                self._forward(idx[a : a + rows], part, 0, out=False)
            st.hist[:, :keep] = idx
            st.pos = keep

    def _shift(self, st: ExactGPTState, n: int) -> None:
        """Window full: drop the ``n`` oldest inputs after BOS; the rest move ``n`` positions back, their keys
        rotated back by ``n`` positions: rint((x1 cos + x2 sin) / 2^ROT_BITS), rint((x2 cos - x1 sin) / 2^ROT_BITS)
        with the rotary table's integers at ``n`` (exact below 2^53), clamped as the cache step clamps."""
        ctx, half, div = self.cfg.context, self.hd // 2, float(1 << ROT_BITS)
        c, sn = self.cos[n].double(), self.sin[n].double()
        for i in range(len(st.k)):
            for a in range(0, st.k[i].shape[0], SHIFT_ROWS):  # a few rows at a time: bounded memory
                x1, x2 = st.k[i][a : a + SHIFT_ROWS, :, 1 + n :].double().split(half, dim=-1)
                k = torch.cat([torch.round((x1 * c + x2 * sn) / div), torch.round((x2 * c - x1 * sn) / div)], dim=-1)
                k = k.clamp(-QK_CLAMP, QK_CLAMP)
                if k.numel() and float(k.abs().max()) > _narrow(st.k[i]):
                    st.widen()  # a rotated key beyond int16: every cache to float32 (what is shifted keeps its values)
                st.k[i][a : a + SHIFT_ROWS, :, 1 : ctx - n] = k.to(st.k[i].dtype)
            st.v[i][..., 1 : ctx - n] = st.v[i][..., 1 + n :].clone()
        st.hist[:, 1 : ctx - n] = st.hist[:, 1 + n :].clone()
        st.pos = ctx - n

    def step(self, tokens: Tensor, st: ExactGPTState) -> tuple[Tensor, ExactGPTState]:
        return _widening(st, lambda: self._step(tokens, st)), st

    def _step(self, tokens: Tensor, st: ExactGPTState) -> Tensor:
        self._reprime_if_full(st)
        st.hist[:, st.pos] = tokens
        h = self._forward(tokens[:, None], st, st.pos)[:, -1]
        st.pos += 1
        return exact.counts_from_logits(self.head(h))

    def _counts(self, h: Tensor) -> Tensor:
        """The counts of hidden states h [B, T, C], a few rows at a time: the same integers in bounded
        memory (the head's logits are [rows, T, V] float64)."""
        rows = max(1, HEAD_POSITIONS // h.shape[1])
        return torch.cat([exact.counts_from_logits(self.head(h[a : a + rows])) for a in range(0, h.shape[0], rows)])

    def steps(self, inputs: Tensor, st: ExactGPTState) -> tuple[Tensor, ExactGPTState]:
        """What T calls of ``step`` return, computed in passes of many positions (the encoder knows
        every input): inputs [B, T] -> counts [B, T, V]. Exact arithmetic makes them the same integers."""
        out, i, T = [], 0, inputs.shape[1]
        while i < T:
            out.append(_widening(st, lambda i=i: self._pass(inputs[:, i:], st)))
            i += out[-1].shape[1]
        return torch.cat(out, dim=1), st

    def _pass(self, inputs: Tensor, st: ExactGPTState) -> Tensor:
        """The counts of the first inputs up to the window's end (re-primed first if full); the state moves on."""
        self._reprime_if_full(st)
        n = min(inputs.shape[1], self.cfg.context - st.pos)
        st.hist[:, st.pos : st.pos + n] = inputs[:, :n]
        out = self._counts(self._forward(inputs[:, :n], st, st.pos))
        st.pos += n
        return out


def _widening(st: ExactGPTState, work):
    """``work()``, or, where it met a value beyond the state's int16 caches, ``work()`` again on them widened
    (it raised before the state moved on: every position it wrote is written again)."""
    try:
        return work()
    except _Wide:
        st.widen()
        return work()


# ---------------------------------------------------------------------------- LSTM

TABLE_N = exact.TABLE_RANGE << exact.FINE_BITS


def _table(name: str):
    return exact._fine_table(name, "cpu").numpy()



class ExactLSTM(ExactPredictor):
    """The LSTM of lmzip.models.model in exact arithmetic: gates by integer tables, state in 1/2^FRAC."""

    def __init__(self, m: LSTMModel, device: str, quant: Quant):
        c = self.cfg = m.config
        self.vocab, self.bos, self.device = c.vocab_size, c.vocab_size, device
        self.emb = fixed(m.wte.weight).to(device)
        lstm = m.lstm
        self.ih, self.hh = [], []
        for n in range(c.n_layer):
            bias = getattr(lstm, f"bias_ih_l{n}").double() + getattr(lstm, f"bias_hh_l{n}").double()
            self.ih.append(QLinear(getattr(lstm, f"weight_ih_l{n}"), bias, quant=quant).to(device))
            self.hh.append(QLinear(getattr(lstm, f"weight_hh_l{n}"), quant=quant).to(device))
        self.head = _head(m, quant).to(device)

    def start(self, batch: int) -> tuple[Tensor, Tensor]:
        c = self.cfg
        z = torch.zeros(c.n_layer, batch, c.n_embd, dtype=torch.float64, device=self.device)
        return z, z.clone()

    def step(self, tokens: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        h, c = state
        h, c = h.clone(), c.clone()
        x = self.emb[tokens]
        one = float(1 << FRAC)
        for n in range(self.cfg.n_layer):
            gates = self.ih[n](x) + self.hh[n](h[n])
            if exact.FAST and gates.device.type == "cpu":
                hn, cn = kernels.lstm_cell(gates.numpy(), c[n].contiguous().numpy(), _table("sigmoid"), _table("tanh"),
                                           TABLE_N, FRAC - exact.FINE_BITS, one)
                h[n], c[n] = torch.from_numpy(hn), torch.from_numpy(cn)
                x = h[n]
                continue
            i, f, g, o = gates.chunk(4, dim=-1)  # torch's gate order
            i, f, o = apply_table("sigmoid", i), apply_table("sigmoid", f), apply_table("sigmoid", o)
            g = apply_table("tanh", g)
            c[n] = torch.round((f * c[n] + i * g) / one)  # products < 2^53: exact; / 2^FRAC exact
            h[n] = torch.round(o * apply_table("tanh", c[n]) / one)
            x = h[n]
        return exact.counts_from_logits(self.head(x)), (h, c)
