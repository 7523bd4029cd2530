"""Feeding bytes through the loop's own per-byte machinery, for tests of what the contexts hold."""

from __future__ import annotations

import numpy as np

from lmzip.cm.history import N_STATE
from lmzip.cm.loop import byte_contexts, byte_end, group_bounds, scratch
from lmzip.cm.model import allocate


def looked_up(text: bytes, version: int) -> list[np.ndarray]:
    """The contexts a version looks up before each byte of ``text`` and after its last (`byte_contexts`: the
    indirect, token and word-indirect ones too)."""
    t = allocate(1, version)
    work = scratch(t.w1, t.wf, t.ht, t.it, t.rsm, t.ltab, group_bounds(t.wf.shape[1] - 1, t.ht.shape[0] + 2),
                   np.array([t.start], dtype=np.int64), t.span)
    hist = np.zeros((1, N_STATE), dtype=np.int64)
    h, cap = hist[0], len(text) + 1
    buf = np.zeros(cap, dtype=np.uint8)
    last, lastd, gate = np.zeros(256, dtype=np.int64), np.zeros(256, dtype=np.int64), np.zeros(4, dtype=np.int64)
    seen = []
    for c in text:
        expect = byte_contexts(t.arrays, work, h, hist, buf, 0, cap)
        seen.append(work[4].copy())
        byte_end(t.arrays, work, h, c, buf, 0, cap, last, lastd, expect, gate)
    byte_contexts(t.arrays, work, h, hist, buf, 0, cap)
    return [*seen, work[4].copy()]
