"""Version 22's last SSE steps (`lmzip.cm.model` runs them after `lmzip.cm.mixers.refine`): three more APM stages
over the mixed p, by the last three bytes, the last four and the current word (each with the partial byte, hashed
to 16 bits; none where the image model picks the SSE's context), averaged into the refined p (4:1:1:1); then a
calibration: for each bit position and each of 4096 bins of that p, how many 0s and 1s followed, counted, not
decayed (paq8px's APMPost does the like): its estimate is the p coded with. Where the models agree for a long stretch
(a repeated text, a run, a table's fixed columns) a bit then costs what such bits really miss, not an APM's floor of
~1/2000. Their contexts and counts follow the misses stage in the match-state stage's table (ENTRIES). At level 8:
0.11% fewer bytes over benchmarks/cm_sample.py's sample, 0.19% on world192.txt whole, 2.5% on kennedy.xls, 100,000
a's in 26 bytes, not 43 (benchmarks/results/cm-sample.md)."""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.mixers import APM3_CTX, MISS_APM
from lmzip.cm.parts import apm_ask, apm_p_pair, apm_update_pair, clamp_p, hash2

FIRST = APM3_CTX + MISS_APM  # the stages' first context in the match-state stage's table: after the misses stage's
STAGES = 3 << 16  # the three stages' contexts (65536 each)
BINS = 4096  # the calibration's bins of the 16-bit p (its top 12 bits), per bit position
COUNTS = 8 * BINS * 2  # its counts: (bit position x bin) x (0s, 1s)
LIMIT = 1 << 30  # a bin's counts halve past it (int32 entries)
RATE = 5  # the stages' APM rate (an update shared by two buckets, as version 6's)
ENTRIES = 33 * STAGES + COUNTS  # the int32 entries the stages and the calibration add to the table


def counts_init() -> np.ndarray:
    """The calibration's starting counts: bin b of 4096 as if (4096 - b) / 2 0s and b / 2 1s had followed (its
    estimate starts as the bin's own p, and moves as thousands of bits come)."""
    b = np.arange(BINS, dtype=np.int32)
    pair = np.stack(((BINS - b) >> 1, b >> 1), axis=1).reshape(-1)
    return np.tile(pair, 8).astype(np.int32)


@njit(cache=True, inline="always")
def has_tail(apm3):
    """Whether the match-state stage's table holds version 22's stages (after its FIRST contexts)."""
    return apm3.shape[0] > FIRST * 33


@njit(cache=True, inline="always")
def stage_contexts(c4, c0, w0):
    """The three stages' contexts in the table: the last three bytes, the last four, the word, each with the partial
    byte ``c0``, hashed to 16 bits."""
    return (FIRST + (hash2(c4 & 0xFFFFFF, c0) & 0xFFFF), FIRST + 65536 + (hash2(c4, c0 + 256) & 0xFFFF),
            FIRST + 131072 + (hash2(w0, c0 + 512) & 0xFFFF))


@njit(cache=True, inline="always")
def tail_ask(apm3, c4, c0, w0):
    """The three stages' entries `tail_p` will read, asked for while the models' inputs are read."""
    k5, k6, k7 = stage_contexts(c4, c0, w0)
    apm_ask(apm3, k5)
    apm_ask(apm3, k6)
    apm_ask(apm3, k7)


@njit(cache=True, inline="always")
def tail_p(apm3, aj, pm, q, c4, c0, j, w0):
    """The refined ``q`` (16 bits) after the three stages over the mixed ``pm`` (12 bits) and the calibration, bit
    ``j`` of partial byte ``c0`` (``c4``: the last four bytes, ``w0``: the word's hash; -1 where the image model
    chose the order-2 stage's context: the stages, which know bytes, not pixels, are neither read nor updated);
    what to update into aj[4:8]."""
    p = q
    aj[4] = -1
    if w0 >= 0:
        k5, k6, k7 = stage_contexts(c4, c0, w0)
        a5, aj[4] = apm_p_pair(apm3, k5, pm)
        a6, aj[5] = apm_p_pair(apm3, k6, pm)
        a7, aj[6] = apm_p_pair(apm3, k7, pm)
        p = clamp_p((4 * q + a5 + a6 + a7 + 3) // 7)
    at = (FIRST + STAGES) * 33 + ((j * BINS + (p >> 4)) << 1)
    aj[7] = at
    n0, n1 = np.int64(apm3[at]), np.int64(apm3[at + 1])
    return clamp_p(((2 * n1 + 1) << 16) // (2 * (n0 + n1) + 2))


@njit(cache=True, inline="always")
def tail_learn(apm3, aj, y):
    """The three stages and the calibration's bin after bit ``y``."""
    if aj[4] >= 0:
        for k in range(4, 7):
            apm_update_pair(apm3, aj[k], y, RATE)
    at = aj[7]
    apm3[at + y] += 1
    if apm3[at + y] > LIMIT:
        apm3[at] >>= 1
        apm3[at + 1] >>= 1
