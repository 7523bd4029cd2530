"""Seeded random weights that are the same on every machine: the start of learning from scratch."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from lmzip.models.model import Predictor


def _normal(bits: np.random.PCG64, n: int) -> np.ndarray:
    """n approximately standard normal numbers, each the sum of 12 uniforms minus 6 (exact integers)."""
    raw = bits.random_raw(3 * n).reshape(n, 3)
    total = np.zeros(n, dtype=np.int64)
    for w in range(3):
        for j in range(4):  # four 16-bit uniforms k per raw word: (k + 1/2) / 2^16 in (0, 1)
            total += ((raw[:, w] >> np.uint64(16 * j)) & np.uint64(0xFFFF)).astype(np.int64)
    return (total * 2 - 12 * 65535) / 131072.0  # (sum of the 12 uniforms) - 6, exactly


def _uniform(bits: np.random.PCG64, n: int) -> np.ndarray:
    """n uniform numbers in (-1, 1) from 53 random bits each (exact)."""
    return ((bits.random_raw(n) >> np.uint64(11)).astype(np.int64) * 2 - ((1 << 53) - 1)) / float(1 << 53)


def seeded_init(model: Predictor, seed: int) -> Predictor:
    """Random weights from ``seed`` that are the same on every machine and torch build (the raw PCG64
    stream and integer arithmetic, not torch's generator): GPT-2's normal initialisation for the
    Transformer, torch's uniform one for the LSTM, norms at 1 and 0."""
    bits = np.random.PCG64(seed)
    down = 0.02 / math.sqrt(2 * model.config.n_layer)
    with torch.no_grad():
        for name, mod in model.named_modules():
            if isinstance(mod, nn.LayerNorm):
                mod.weight.fill_(1.0)
                mod.bias.zero_()
            elif isinstance(mod, (nn.Linear, nn.Embedding)):
                std = down if name.endswith(("attn.proj", "mlp.down")) else 0.02
                w = mod.weight
                w.copy_(torch.from_numpy(_normal(bits, w.numel()) * std).view(w.shape))
            elif isinstance(mod, nn.LSTM):
                bound = 1.0 / math.sqrt(mod.hidden_size)
                for p in mod.parameters():
                    p.copy_(torch.from_numpy(_uniform(bits, p.numel()) * bound).view(p.shape))
    return model
