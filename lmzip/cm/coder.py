"""A 32-bit binary arithmetic coder without carries (the paq/lpaq scheme), in integers only.

The coder keeps an interval [x1, x2] of 32-bit integers. Coding a bit with P(1) = p/65536 splits it at
xmid: a 1 keeps the low part [x1, xmid], a 0 the high part [xmid + 1, x2]. Whenever x1 and x2 agree
on their top byte that byte can never change again, so it is written out and both are shifted left
(x2 filling with ones). The decoder holds the same interval plus x, the 32 bits of the stream it has
read, and answers "is x <= xmid" with the very same split: the two functions below are one step each,
line for line the same arithmetic. State lives in an int64 array: [x1, x2, x (decoder), position].
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.jitcache import UNCOUNTED

M32 = 0xFFFFFFFF


@njit(cache=True, inline="always")
def _split(x1: int, x2: int, p: int) -> int:
    """xmid: x1 + (x2 - x1) * p / 65536, rounded down, every product below 2^48."""
    r = x2 - x1
    return x1 + (r >> 16) * p + (((r & 0xFFFF) * p) >> 16)


def new_state() -> np.ndarray:
    """A fresh coder state: the whole interval, nothing read or written."""
    return np.array([0, M32, 0, 0], dtype=np.int64)


@njit(**UNCOUNTED)
def encode_bit(st: np.ndarray, out: np.ndarray, bit: int, p: int) -> None:
    """Narrow the interval to `bit`'s part (P(1) = p/65536, 1 <= p <= 65535) and emit settled bytes."""
    x1, x2 = st[0], st[1]
    xmid = _split(x1, x2, p)
    if bit:
        x2 = xmid
    else:
        x1 = xmid + 1
    pos = st[3]
    while ((x1 ^ x2) & 0xFF000000) == 0:
        out[pos] = x2 >> 24
        pos += 1
        x1 = (x1 << 8) & M32
        x2 = ((x2 << 8) & M32) | 255
    st[0], st[1], st[3] = x1, x2, pos


@njit(**UNCOUNTED)
def decode_bit(st: np.ndarray, src: np.ndarray, p: int) -> int:
    """The mirror of encode_bit: the same split, the bit read off x, the same bytes shifted in."""
    x1, x2, x = st[0], st[1], st[2]
    xmid = _split(x1, x2, p)
    bit = 1 if x <= xmid else 0
    if bit:
        x2 = xmid
    else:
        x1 = xmid + 1
    pos = st[3]
    while ((x1 ^ x2) & 0xFF000000) == 0:
        b = src[pos] if pos < src.shape[0] else 255  # past the end: ones, as flush() assumes
        pos += 1
        x1 = (x1 << 8) & M32
        x2 = ((x2 << 8) & M32) | 255
        x = ((x << 8) & M32) | b
    st[0], st[1], st[2], st[3] = x1, x2, x, pos
    return bit


@njit(cache=True)
def start_decoder(st: np.ndarray, src: np.ndarray) -> None:
    """Read the first four bytes into x (the encoder emitted them first)."""
    x = 0
    for i in range(4):
        b = src[i] if i < src.shape[0] else 255
        x = (x << 8) | b
    st[2], st[3] = x, 4


@njit(**UNCOUNTED)
def flush(st: np.ndarray, out: np.ndarray) -> None:
    """End the stream with x1's top byte: read back followed by ones it lies in [x1, x2]."""
    out[st[3]] = st[0] >> 24
    st[3] += 1
