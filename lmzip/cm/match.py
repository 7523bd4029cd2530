"""The match model (the byte that followed the last occurrence of the recent bytes, held while it agrees)
and version 4's expected-byte model over its expected byte."""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.history import FILL, MLEN, MPTR
from lmzip.cm.parts import SM_LIMIT, adapt
from lmzip.cm.tables import stretch

MINLEN = 6             # the match model looks up the last MINLEN bytes
EBYTE_BITS = 21        # the expected-byte model's entries (version 4): 2^21


@njit(cache=True, inline="always")
def match_quant(mlen):
    """The match length as the state map's row (0..31) and as a 2-bit bucket (0: none, or one kept after a
    miss, version 4, that has not yet matched MINLEN bytes again)."""
    mq = mlen if mlen < 16 else 16 + min((mlen - 16) >> 2, 15)
    mlb = 0 if mlen < MINLEN else (1 if mlen < 16 else (2 if mlen < 32 else 3))
    return mq, mlb


@njit(cache=True, inline="always")
def match_index(mlen, ebyte, mq, c0, j):
    """The match model's state-map entry for bit ``j`` (its quantized length and expected bit), or -1
    where there is no match or the bits so far left the byte it expects."""
    if mlen > 0 and ((ebyte | 256) >> (8 - j)) == c0:
        return mq * 2 + ((ebyte >> (7 - j)) & 1)
    return -1


@njit(cache=True, inline="always")
def pair_inputs(x, at, sm, i, length, cap, shift):
    """A match model's two inputs at x[at:]: its learned p (state-map entry ``i``, stretched) and its length
    (at most ``cap``, times 2^``shift``) signed by the expected bit (``i``'s low bit); zeros where ``i`` < 0."""
    if i >= 0:
        x[at] = stretch(np.int64(sm[i]) >> 20)
        x[at + 1] = (min(length, cap) << shift) * (2 * (i & 1) - 1)
    else:
        x[at] = 0
        x[at + 1] = 0


@njit(cache=True, inline="always")
def match_inputs(x, at, msm, mi, mlen):
    """The match model's two inputs at x[at:] (its learned p, its length signed by the expected bit), then the bias."""
    pair_inputs(x, at, msm, mi, mlen, 32, 5)
    x[at + 2] = 256


@njit(cache=True, inline="always")
def match_learn(msm, mi, y):
    """The match model's state map after bit ``y``."""
    if mi >= 0:
        msm[mi] = adapt(np.int64(msm[mi]), y, SM_LIMIT)


@njit(cache=True, inline="always")
def ebyte_index(mi, mlb, ebyte, c1, j):
    """The expected-byte model's entry for bit ``j`` (version 4): the match's expected byte, the previous
    byte, the length bucket; -1 where ``match_index`` has none."""
    if mi < 0:
        return -1
    return (mlb << 19) | (ebyte << 11) | (c1 << 3) | j


@njit(cache=True, inline="always")
def ebyte_inputs(x, at, em, ei):
    """The expected-byte model's input at x[at] (its learned p, stretched; 0 with no entry), if the version has it."""
    if em.shape[0]:
        x[at] = stretch(np.int64(em[ei]) >> 20) if ei >= 0 else 0


@njit(cache=True, inline="always")
def ebyte_learn(em, ei, y):
    """The expected-byte model's entry after bit ``y``."""
    if em.shape[0] and ei >= 0:
        em[ei] = adapt(np.int64(em[ei]), y, SM_LIMIT)


@njit(cache=True, inline="always")
def match_byte(h, seg, buf, cap):
    """The byte the match of history ``h`` predicts, or 0; the match is dropped if that byte is not
    coded yet (its segment of ``cap`` bytes in the buffer has not reached it: on both sides alike)."""
    if h[MLEN] > 0:
        ms = (h[MPTR] - 1) // cap
        if h[MPTR] - ms * cap >= seg[ms, FILL]:
            h[MLEN] = 0
    return buf[h[MPTR]] if h[MLEN] > 0 else 0
