"""The walk of the mixed loop over the vocabulary sorted by the tokens' bytes (lmzip.cm.mix): a token is coded as
its bytes, each bit splitting the range of tokens that start with the bits so far; what every version of the
mixed loop shares."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from lmzip.cm.coder import decode_bit, encode_bit
from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.mixers import APM_RATE
from lmzip.cm.parts import apm_p, apm_update, clamp_p
from lmzip.cm.tables import stretch


@dataclass(frozen=True)
class Vocab:
    """The vocabulary sorted by the tokens' bytes: what the loop needs to find a prefix's range."""

    sbytes: np.ndarray  # [V, maxlen] uint8: the sorted tokens' bytes (0 past their end)
    slen: np.ndarray    # [V] int64: their lengths
    sperm: np.ndarray   # [V] int64: sorted index -> token id
    rank: np.ndarray    # [V] int64: token id -> sorted index
    root: int           # the first sorted index of a token with bytes (tokens of no bytes sort first)

    @classmethod
    def of(cls, pieces: list[bytes]) -> Vocab:
        order = sorted(range(len(pieces)), key=lambda i: pieces[i])
        maxlen = max(1, max(len(p) for p in pieces))
        sbytes = np.zeros((len(pieces), maxlen), dtype=np.uint8)
        for s, i in enumerate(order):
            sbytes[s, : len(pieces[i])] = np.frombuffer(pieces[i], dtype=np.uint8)
        sperm = np.asarray(order, dtype=np.int64)
        rank = np.empty_like(sperm)
        rank[sperm] = np.arange(len(pieces))
        slen = np.asarray([len(pieces[i]) for i in order], dtype=np.int64)
        return cls(sbytes, slen, sperm, rank, int(np.sum(slen == 0)))


@njit(cache=True)
def grow(out: np.ndarray) -> np.ndarray:
    bigger = np.empty(out.shape[0] * 2 + 4096, dtype=np.uint8)
    bigger[: out.shape[0]] = out
    return bigger


@njit(**UNCOUNTED)
def first_at_least(sbytes, a, b, d, thr):
    """The first sorted index in [a, b) whose byte d is >= thr (byte d is non-decreasing there)."""
    while a < b:
        m = (a + b) >> 1
        if sbytes[m, d] < thr:
            a = m + 1
        else:
            b = m
    return a


@njit(**UNCOUNTED)
def code_bit(encode, st, out, src, y, p16):
    """Code (or decode) a bit with P(1) = p16 / 65536."""
    if encode:
        encode_bit(st, out, y, p16)
        return y
    return decode_bit(st, src, p16)


@njit(cache=True, inline="always")
def cumulate(cum, counts, q, sperm):
    """Row ``q`` of the model's counts (each + 1, out of 2^24) in sorted order, summed into ``cum``."""
    cum[0] = 0
    for k in range(sperm.shape[0]):
        cum[k + 1] = cum[k] + np.int64(counts[q, sperm[k]]) + 1


@njit(**UNCOUNTED)
def ends(encode, coder, apm5, cum, lo, hi, c4, y):
    """The end flag: whether the token ends with the bytes so far, coded with the model's own probability
    (the token's count over the range's), refined by what ended tokens after this byte before (an APM)."""
    st, out, src = coder
    p16 = clamp_p(((cum[lo + 1] - cum[lo]) << 16) // (cum[hi] - cum[lo]))
    pe = p16 >> 4
    pe = 1 if pe < 1 else (4095 if pe > 4095 else pe)
    ae, je = apm_p(apm5, (c4 & 0xFF) * 32 + ((stretch(pe) + 2048) >> 7), pe)
    p16 = clamp_p((p16 + 3 * ae + 2) >> 2)
    y = code_bit(encode, st, out, src, y, p16)
    apm_update(apm5, je, y, APM_RATE)
    return y
