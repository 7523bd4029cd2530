"""Version 18's orders: the last 6 and the last 12 bytes as two more hashed contexts (between order 5 and order 8,
and past it), and the fifth first-layer mixer's weight set chosen by the last three bytes (hashed to 2^16), not the
last two. Where a unit of text is two or more bytes (UTF-16, Cyrillic or Greek in UTF-8, a spreadsheet's cells) order
6 is three units back and order 12 six: over the sample they took kinds/utf16 1.5%, kennedy.xls 0.8% and gogol 0.3%
lower; the mixer by order 3 another 0.10% over the sample, genji 0.4%, bible 0.2% (benchmarks/results/cm-sample.md)."""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.parts import hash2

AT = 47  # order 6's row among the hashed models (order 12's the next): a table with more rows than AT is version 18's


@njit(**UNCOUNTED)  # not inlined: once a byte, and inlined into the loop it made every version's loop ~10% slower
def order_contexts(ctx, c4, c8, buf, gi, k):
    """ctx[AT:AT + 2] from the last eight bytes (``c4``, ``c8``) and the four before them (buf[gi - 12:gi - 8], ``k``
    bytes seen; zeros before the first): order 6; order 12."""
    ctx[AT] = hash2(hash2(c4, c8 & 0xFFFF), 6)
    c12 = 0
    for q in range(9, 13):
        c12 = (c12 << 8) | (np.int64(buf[gi - q]) if k >= q else 0)
    ctx[AT + 1] = hash2(hash2(hash2(c4, c8), c12), 12)


@njit(cache=True, inline="always")
def order3_set(c4):
    """The fifth first-layer mixer's weight set (of 2^16) by the last three bytes."""
    return hash2(c4 & 0xFFFFFF, 5) & 0xFFFF
