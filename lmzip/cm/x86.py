"""Version 21's x86 filter: in x86 machine code, each near call (E8) and jump (E9) carries the distance to its target
(32 bits, little-endian), so calls to one function read differently at every site; the filter writes the target
instead, as the site's offset in the input + the distance, and calls to one function read alike (what xz's BCJ
filter and paq8's exe transform do; lmzip's layout is its own):

    where bytes e - 4 … e are E8 or E9 and four bytes whose last is 00 or FF (a distance under 2^24 either way):
      the distance's 25 bits (the three low bytes, bit 24 = the last byte is FF) + e + 1 (where the next instruction
      starts), modulo 2^25, written back the same way; e from the input's end back to its fifth byte

The inverse subtracts where the filter added, e from the fifth byte on. Each test reads its opcode as it was (a
rewrite at a larger e never reaches it; one at a smaller e comes after the test, and is undone before it) and a last
byte that stays 00 or FF, so the inverse finds every site the filter found (paq8's exe transform runs in the same two
directions). Conditional jumps (0F 80-8F) are left alone: their distances are short and local, and as targets they
gave 1.1% and 0.1% on two binaries and cost 0.06% on a third. The filter runs where such a site comes once in every
`EVERY` bytes or more often (four x86-64 binaries: once in 54-80; the bench's and the kinds set's files: never, or
under once in 2,000), and the payload's first byte records whether it ran (docs/format.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit

EVERY = 512  # the filter runs where a call or jump comes once in EVERY bytes or more often
NONE, X86 = 0, 1  # a version-21 payload's first byte: which filter its bytes went through


@njit(cache=True, inline="always")
def _site(a: np.ndarray, e: int) -> bool:
    """Whether bytes e - 4 … e of ``a`` are a call or jump the filter rewrites (E8 or E9, its last byte 00 or FF)."""
    return (a[e - 4] & 0xFE) == 0xE8 and (a[e] == 0 or a[e] == 0xFF)


@njit(cache=True)
def _count(a: np.ndarray) -> int:
    """How many calls and jumps ``a`` holds (as the filter's test finds them in its bytes as they are)."""
    hits = 0
    for e in range(4, a.shape[0]):
        hits += _site(a, e)
    return hits


@njit(cache=True)
def _shift(a: np.ndarray, sign: int) -> None:
    """Each call's and jump's distance in ``a`` made its target (``sign`` +1: from the last byte back), or back (-1:
    from the first byte on), in place."""
    n = a.shape[0]
    for k in range(4, n):
        e = n + 3 - k if sign > 0 else k
        if _site(a, e):
            v = np.int64(a[e - 3]) | (np.int64(a[e - 2]) << 8) | (np.int64(a[e - 1]) << 16)
            v |= np.int64(a[e] == 0xFF) << 24
            v = (v + sign * (e + 1)) & 0x1FFFFFF
            a[e - 3], a[e - 2], a[e - 1] = v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF
            a[e] = 0xFF if v >> 24 else 0


def choose(data: np.ndarray) -> int:
    """The filter for ``data``: X86 where its calls and jumps come once in `EVERY` bytes or more often, else NONE."""
    return X86 if len(data) and _count(data) * EVERY >= len(data) else NONE


def forward(data: np.ndarray, filt: int) -> np.ndarray:
    """``data`` through filter ``filt`` (a copy where it runs; ``data`` itself under NONE)."""
    if filt == NONE:
        return data
    out = data.copy()
    _shift(out, 1)
    return out


def inverse(data: np.ndarray, filt: int) -> np.ndarray:
    """The bytes `forward` was given, from what it returned (``data`` is changed in place)."""
    if filt != NONE:
        _shift(data, -1)
    return data
