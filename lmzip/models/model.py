"""Predictors: a decoder-only Transformer and an LSTM behind one step-by-step interface.

Both see a stream ``[BOS, t0, t1, ...]`` and, at step i, return logits for token ``t_i``.
``forward`` (whole sequences) is for training; ``start``/``step`` is the float reference path.
Coding always runs the exact integer form of these models (lmzip.models.qmodel), which gives the same
counts on every machine; learning while coding updates them by lmzip.coding.learn's deterministic steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from lmzip.models.config import VARIANTS as VARIANTS  # re-exported: the config lives beside the models
from lmzip.models.config import GPTConfig, LSTMConfig, ModelConfig
from lmzip.models.config import config_from_dict as config_from_dict
from lmzip.models.config import config_to_dict as config_to_dict


class Predictor(nn.Module):
    """The interface the codec and the trainer use; subclasses hold the weights."""

    config: ModelConfig

    @property
    def bos(self) -> int:
        """The id fed before the first token of every stream."""
        bos = getattr(self.config, "bos", None)
        return self.config.vocab_size if bos is None else bos

    def start(self, batch: int) -> Any:
        """A fresh state for ``batch`` independent streams."""
        raise NotImplementedError

    def step(self, tokens: Tensor, state: Any) -> tuple[Tensor, Any]:
        """Feed one token per stream (shape [B]); return next-token logits [B, V] and the state."""
        raise NotImplementedError

    def num_params(self) -> int:
        """Parameter count (tied weights counted once)."""
        return sum(p.numel() for p in self.parameters())


def _head(model: Predictor, h: Tensor) -> Tensor:
    """The output layer: logits over the coded symbols (a BOS row of the tied embedding is never predicted)."""
    if not getattr(model.config, "tied", True):
        return model.lm_head(h)
    return F.linear(h, model.wte.weight[: model.config.vocab_size])


# ---------------------------------------------------------------------------- Transformer


def rotary_tables(n: int, dim: int, base: float = 10000.0) -> tuple[Tensor, Tensor]:
    """cos/sin tables of shape [n, dim/2] for rotary position embeddings."""
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    ang = torch.outer(torch.arange(n, dtype=torch.float32), inv)
    return ang.cos(), ang.sin()


def apply_rotary(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Rotate pairs (x1, x2) of the last dim; x [B, H, T, D], cos/sin [T, D/2]."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class Attention(nn.Module):
    """Causal self-attention with rotary positions and optional grouped-query heads."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.n_head, self.n_kv = cfg.n_head, cfg.n_kv_head
        self.hd = cfg.n_embd // cfg.n_head
        self.rope = cfg.pos == "rope"
        self.qkv = nn.Linear(cfg.n_embd, (cfg.n_head + 2 * cfg.n_kv_head) * self.hd, bias=cfg.bias)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

    def _split(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        B, T, _ = x.shape
        q, k, v = self.qkv(x).split([self.n_head * self.hd, self.n_kv * self.hd, self.n_kv * self.hd], -1)
        # -> [B, heads, T, hd]
        q = q.view(B, T, self.n_head, self.hd).transpose(1, 2)
        k = k.view(B, T, self.n_kv, self.hd).transpose(1, 2)
        v = v.view(B, T, self.n_kv, self.hd).transpose(1, 2)
        return q, k, v

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Whole-sequence attention; also returns k, v [B, Hkv, T, hd] for prefilling a cache."""
        B, T, C = x.shape
        q, k, v = self._split(x)
        if self.rope:
            q, k = apply_rotary(q, cos[:T], sin[:T]), apply_rotary(k, cos[:T], sin[:T])
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.n_kv != self.n_head)
        return self.proj(y.transpose(1, 2).reshape(B, T, C)), k, v

    def step(self, x: Tensor, kc: Tensor, vc: Tensor, pos: int, cos: Tensor, sin: Tensor) -> Tensor:
        """One position: x [B, 1, C]; writes k, v into the caches [B, Hkv, W, hd] at ``pos``."""
        B, _, C = x.shape
        q, k, v = self._split(x)
        if self.rope:
            cs, sn = cos[pos : pos + 1], sin[pos : pos + 1]
            q, k = apply_rotary(q, cs, sn), apply_rotary(k, cs, sn)
        kc[:, :, pos : pos + 1] = k
        vc[:, :, pos : pos + 1] = v
        y = F.scaled_dot_product_attention(
            q, kc[:, :, : pos + 1], vc[:, :, : pos + 1], enable_gqa=self.n_kv != self.n_head
        )
        return self.proj(y.transpose(1, 2).reshape(B, 1, C))


class MLP(nn.Module):
    """The position-wise feed-forward layer: GELU (erf or tanh form), or SwiGLU with a ``gate``."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.kind = cfg.mlp
        self.up = nn.Linear(cfg.n_embd, cfg.hidden, bias=cfg.bias)
        if cfg.mlp == "swiglu":
            self.gate = nn.Linear(cfg.n_embd, cfg.hidden, bias=cfg.bias)
        self.down = nn.Linear(cfg.hidden, cfg.n_embd, bias=cfg.bias)

    def forward(self, x: Tensor) -> Tensor:
        if self.kind == "swiglu":
            return self.down(F.silu(self.gate(x)) * self.up(x))
        if self.kind == "gelu_tanh":
            return self.down(F.gelu(self.up(x), approximate="tanh"))
        return self.down(F.gelu(self.up(x)))


def _norm(cfg: GPTConfig) -> nn.Module:
    return nn.RMSNorm(cfg.n_embd, eps=cfg.norm_eps) if cfg.norm == "rms" else nn.LayerNorm(cfg.n_embd, cfg.norm_eps)


class Block(nn.Module):
    """Pre-norm residual block: x + attn(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.ln1, self.ln2 = _norm(cfg), _norm(cfg)
        self.attn, self.mlp = Attention(cfg), MLP(cfg)


@dataclass
class GPTState:
    """KV caches per layer [B, Hkv, W, hd], the next position, and the inputs seen (for re-priming)."""

    k: list[Tensor]
    v: list[Tensor]
    hist: Tensor  # [B, W] the inputs at cache positions 0..W-1
    pos: int = 0


class GPT(Predictor):
    """Decoder-only Transformer; contexts past the window are handled by re-priming."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size + (cfg.bos is None), cfg.n_embd)
        if cfg.pos == "learned":
            self.wpe = nn.Embedding(cfg.context, cfg.n_embd)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = _norm(cfg)
        if not cfg.tied:
            self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        cos, sin = rotary_tables(cfg.context, cfg.n_embd // cfg.n_head, cfg.rope_base)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        self.apply(_init_weights)
        for b in self.blocks:  # scaled residual init (GPT-2)
            for lin in (b.attn.proj, b.mlp.down):
                nn.init.normal_(lin.weight, std=0.02 / math.sqrt(2 * cfg.n_layer))

    def _logits(self, h: Tensor) -> Tensor:
        return _head(self, self.ln_f(h))

    def forward(self, idx: Tensor) -> Tensor:
        """Training: idx [B, T] -> logits [B, T, V]."""
        x, _ = self._prefill(idx)
        return self._logits(x)

    def _embed(self, idx: Tensor, p0: int) -> Tensor:
        """Token embeddings of idx [B, T] at window positions p0.. (plus learned position embeddings)."""
        x = self.wte(idx)
        if self.config.pos == "learned":
            x = x + self.wpe.weight[p0 : p0 + idx.shape[1]]
        return x

    def _prefill(self, idx: Tensor) -> tuple[Tensor, list[tuple[Tensor, Tensor]]]:
        x = self._embed(idx, 0)
        kvs = []
        for b in self.blocks:
            a, k, v = b.attn(b.ln1(x), self.cos, self.sin)
            x = x + a
            x = x + b.mlp(b.ln2(x))
            kvs.append((k, v))
        return x, kvs

    def start(self, batch: int) -> GPTState:
        c = self.config
        shape = (batch, c.n_kv_head, c.context, c.n_embd // c.n_head)
        dev, dt = self.wte.weight.device, self.wte.weight.dtype
        z = [torch.zeros(shape, device=dev, dtype=dt) for _ in range(c.n_layer)]
        hist = torch.zeros(batch, c.context, dtype=torch.long, device=dev)
        return GPTState(z, [t.clone() for t in z], hist)

    def _reprime(self, st: GPTState) -> None:
        """Window full: restart it as [BOS, last W/2-1 inputs] with one causal prefill pass."""
        keep = self.config.context // 2
        idx = st.hist[:, -keep:].clone()
        idx[:, 0] = self.bos
        _, kvs = self._prefill(idx)
        for i, (k, v) in enumerate(kvs):
            st.k[i][:, :, :keep] = k
            st.v[i][:, :, :keep] = v
        st.hist[:, :keep] = idx
        st.pos = keep

    def step(self, tokens: Tensor, st: GPTState) -> tuple[Tensor, GPTState]:
        if st.pos == self.config.context:
            self._reprime(st)
        st.hist[:, st.pos] = tokens
        x = self._embed(tokens[:, None], st.pos)  # [B, 1, C]
        for i, b in enumerate(self.blocks):
            x = x + b.attn.step(b.ln1(x), st.k[i], st.v[i], st.pos, self.cos, self.sin)
            x = x + b.mlp(b.ln2(x))
        st.pos += 1
        return self._logits(x[:, 0]), st


# ---------------------------------------------------------------------------- LSTM


class LSTMModel(Predictor):
    """Embedding -> stacked LSTM -> tied output; the (h, c) state carries unbounded context."""

    def __init__(self, cfg: LSTMConfig):
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size + 1, cfg.n_embd)
        self.lstm = nn.LSTM(cfg.n_embd, cfg.n_embd, cfg.n_layer, batch_first=True)
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.apply(_init_weights)

    def forward(self, idx: Tensor, state: tuple[Tensor, Tensor] | None = None) -> Tensor:
        """Training: idx [B, T] -> logits [B, T, V]."""
        return self.forward_state(idx, state)[0]

    def forward_state(self, idx: Tensor, state: tuple[Tensor, Tensor] | None = None):
        """Training with carried state (truncated BPTT): returns logits and the new (h, c)."""
        y, state = self.lstm(self.wte(idx), state)
        return _head(self, self.ln_f(y)), state

    def start(self, batch: int) -> tuple[Tensor, Tensor]:
        c = self.config
        w = self.wte.weight
        z = torch.zeros(c.n_layer, batch, c.n_embd, device=w.device, dtype=w.dtype)
        return z, z.clone()

    def step(self, tokens: Tensor, state: tuple[Tensor, Tensor]) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        logits, state = self.forward_state(tokens[:, None], state)
        return logits[:, 0], state


def _init_weights(m: nn.Module) -> None:
    if isinstance(m, (nn.Linear, nn.Embedding)):
        nn.init.normal_(m.weight, std=0.02)
        if getattr(m, "bias", None) is not None:
            nn.init.zeros_(m.bias)


def build_model(cfg: ModelConfig) -> Predictor:
    """A fresh, randomly initialised predictor for a config."""
    return GPT(cfg) if isinstance(cfg, GPTConfig) else LSTMModel(cfg)
