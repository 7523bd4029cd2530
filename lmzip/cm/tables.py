"""Integer lookup tables shared by every model: squash (logit -> probability), stretch (its inverse),
and the reciprocal table that gives an adaptive probability its count-driven learning rate.

Probabilities are 12-bit integers (0..4095 for 0..1); the logistic ("stretch") domain is
-2047..2047, 256 units per natural-log unit of odds. The tables are built from 33 integer knots by
integer interpolation only, so every platform builds the same bytes (no libm `exp`, no float).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# 4096 / (1 + e^(-(i - 16) / 2)) for i = 0..32, rounded once and written down as integers: the knots
# the squash curve is interpolated between (every 128 stretch units = half a nat of odds).
_KNOTS = (1, 2, 4, 6, 10, 17, 27, 45, 74, 120, 194, 311, 488, 747, 1102, 1546, 2048,
          2550, 2994, 3349, 3608, 3785, 3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095)


def _build_squash() -> np.ndarray:
    """SQUASH[d + 2047] = the 12-bit probability of stretch value d, linear between the knots."""
    out = np.empty(4095, dtype=np.int32)
    for d in range(-2047, 2048):
        k, w = (d + 2048) >> 7, (d + 2048) & 127
        out[d + 2047] = (_KNOTS[k] * (128 - w) + _KNOTS[min(k + 1, 32)] * w + 64) >> 7
    return out


def _build_stretch(sq: np.ndarray) -> np.ndarray:
    """STRETCH[p] = the smallest d with squash(d) >= p: the inverse of squash, monotone, in -2047..2047."""
    out = np.full(4096, 2047, dtype=np.int32)
    p = 0
    for d in range(-2047, 2048):
        v = int(sq[d + 2047])
        while p <= v:
            out[p] = d
            p += 1
    return out


SQUASH = _build_squash()
STRETCH = _build_stretch(SQUASH)
# Learning rate 1 / (n + 1.5) after n observations, as a 16-bit fraction: fast at first, then an average.
RECIP = np.array([131072 // (2 * n + 3) for n in range(1024)], dtype=np.int32)


@njit(cache=True, inline="always")
def squash(d: int) -> int:
    """12-bit probability of the stretch value d (clamped to -2047..2047)."""
    if d > 2047:
        d = 2047
    if d < -2047:
        d = -2047
    return SQUASH[d + 2047]


@njit(cache=True, inline="always")
def stretch(p: int) -> int:
    """ln(p / (1 - p)) * 256 for a 12-bit probability p, as an integer."""
    return STRETCH[p]
