"""Version 3's run model (per hashed context, the byte it saw last and how many times in a row) and its two
indirect models (a context and the bytes that followed it last); version 10's token-indirect models (a word or gap
and the bytes that followed it last); version 11's word-indirect models (the word that followed the last word or two
last)."""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.history import GAP, W0
from lmzip.cm.parts import SM_LIMIT, adapt, at_index, at_row, hash2
from lmzip.cm.tables import stretch

N_RUN = 7              # the run model's inputs: hashed models 0..6
RUN_STATES = 64        # its state map's entries per model: the run's length (32 steps) x the predicted bit
IND_BYTES = 256 + 65536  # the indirect models' histories: per byte, then per two bytes
IND_TOKENS = 1 << 20   # version 10: per token (a word or a gap, hashed), the two bytes that followed it last
IND_WORDS = 1 << 20    # version 11: per word, and per two words, (16 bits of) the word that followed them last
WORDS_AT = IND_BYTES + IND_TOKENS


def n_ind(version: int) -> int:
    """The indirect models' history entries of a cm version."""
    return 0 if version < 3 else IND_BYTES if version < 10 else WORDS_AT if version < 11 else WORDS_AT + 2 * IND_WORDS


@njit(cache=True, inline="always")
def token(h):
    """The current token of history ``h``: its word, or between words the gap."""
    return h[W0] if h[W0] != 0 else h[GAP]


@njit(cache=True, inline="always")
def token_contexts(ctx, ind, tok, wlen, c4):
    """Version 10's token-indirect models (ctx[38:40]): the two bytes that followed the current token ``tok`` (a word
    or a gap) last + the word's length; the one byte + the last two bytes."""
    t = np.int64(ind[IND_BYTES + (tok & (IND_TOKENS - 1))])
    ctx[38] = hash2(t | (min(wlen, 7) << 16), 41)
    ctx[39] = hash2((t & 0xFF) | ((c4 & 0xFFFF) << 8), 42)


@njit(cache=True, inline="always")
def word_slots(wp, wpp):
    """Where the word-indirect histories keep the word that followed word ``wp`` (and ``wpp`` before it) last."""
    return WORDS_AT + (wp & (IND_WORDS - 1)), WORDS_AT + IND_WORDS + (hash2(wpp, wp) & (IND_WORDS - 1))


@njit(cache=True, inline="always")
def word_indirect_contexts(ctx, ind, tok, wp, wpp):
    """Version 11's word-indirect models (ctx[40:42]): the word that followed the previous word ``wp`` last + the
    current token ``tok`` (a word or a gap); the word that followed the two previous words last + the same."""
    s1, s2 = word_slots(wp, wpp)
    ctx[40] = hash2(hash2(np.int64(ind[s1]) + 1, tok), 43)
    ctx[41] = hash2(hash2(np.int64(ind[s2]) + 1, tok), 44)


@njit(cache=True, inline="always")
def word_indirect_done(ind, w, wp, wpp):
    """The word-indirect histories after word ``w`` ended, ``wp`` and ``wpp`` the two words before it."""
    s1, s2 = word_slots(wp, wpp)
    ind[s1] = ind[s2] = w & 0xFFFF


@njit(cache=True, inline="always")
def token_done(ind, tok, c):
    """The token-indirect history after byte ``c`` followed token ``tok``."""
    i = IND_BYTES + (tok & (IND_TOKENS - 1))
    ind[i] = ((np.int64(ind[i]) << 8) | c) & 0xFFFF


@njit(cache=True, inline="always")
def indirect_contexts(ctx, ind, c4):
    """The indirect models' contexts (ctx[13:15], version 3): a context and the bytes that followed it last."""
    c1, c21 = c4 & 0xFF, c4 & 0xFFFF
    ctx[13] = hash2(c1 | (np.int64(ind[c1]) << 8), 17)
    ctx[14] = hash2(c21 | (np.int64(ind[256 + c21]) << 16), 18)


@njit(cache=True, inline="always")
def indirect_done(ind, c4, c):
    """The indirect histories after byte ``c`` (``c4``: the bytes before it)."""
    c1, c21 = c4 & 0xFF, 256 + (c4 & 0xFFFF)
    ind[c1] = ((np.int64(ind[c1]) << 8) | c) & 0xFFFF
    ind[c21] = ((np.int64(ind[c21]) << 8) | c) & 0xFFFF


@njit(cache=True, inline="always")
def run_start(ht, base, rpos, rinfo):
    """The run of each of the first N_RUN hashed contexts as the byte starts (their first nibble's buckets):
    the byte it saw last and how many times in a row (the low 16 bits of the bucket's check slot)."""
    for k in range(rpos.shape[0]):
        rpos[k] = base[k]
        rinfo[k] = np.int64(ht[at_row(base[k]), at_index(base[k])]) & 0xFFFF


@njit(cache=True, inline="always")
def run_inputs(x, at, rsm, rinfo, ridx, c0, j):
    """The run model's inputs at x[at:]: per context, the learned p of the bit its last byte predicts (0
    where it saw none, or the bits so far left that byte); ``ridx``: the state-map entries, -1 for none."""
    for k in range(rinfo.shape[0]):
        n, b = rinfo[k] & 0xFF, rinfo[k] >> 8
        if n > 0 and ((b | 256) >> (8 - j)) == c0:
            q = n if n < 16 else 16 + min((n - 16) >> 3, 15)
            ridx[k] = (q << 1) | ((b >> (7 - j)) & 1)
            x[at + k] = stretch(np.int64(rsm[k, ridx[k]]) >> 20)
        else:
            ridx[k] = -1
            x[at + k] = 0


@njit(cache=True, inline="always")
def run_learn(rsm, ridx, y):
    """The run model's state maps after bit ``y``."""
    for k in range(ridx.shape[0]):
        if ridx[k] >= 0:
            rsm[k, ridx[k]] = adapt(np.int64(rsm[k, ridx[k]]), y, SM_LIMIT)


@njit(cache=True, inline="always")
def run_done(ht, rpos, rinfo, c):
    """Each context's run after byte ``c``: one longer, or a new run of ``c`` (a bucket claimed again within
    the byte, whose low bits no longer hold the run read at its start, is left alone)."""
    for k in range(rpos.shape[0]):
        v = np.int64(ht[at_row(rpos[k]), at_index(rpos[k])])
        if v & 0xFFFF != rinfo[k]:
            continue
        n, b = rinfo[k] & 0xFF, rinfo[k] >> 8
        if n > 0 and b == c:
            n = min(n + 1, 255)
        else:
            n, b = 1, c
        ht[at_row(rpos[k]), at_index(rpos[k])] = (v & 0xFFFF0000) | (b << 8) | n
