"""The bilevel-image model (cm version 2; version 5 six more contexts): single pixels (bits) predicted from
the pixels before them in their row and around them in the rows above, a row being the record length."""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.history import C4, FILL, RLEN
from lmzip.cm.parts import SM_LIMIT, adapt, hash2
from lmzip.cm.tables import stretch

N_IMAGE = 5            # the image model's contexts (version 2)
N_IMAGE5 = 11          # version 5's: six more, wider and taller
IMAGE_BITS = 16        # its tables' entries: 2^16 each


@njit(cache=True, inline="always")
def _row3(buf, at):
    """The 24 pixels around byte ``at`` of the buffer: the byte before, it, the byte after."""
    return (np.int64(buf[at - 1]) << 16) | (np.int64(buf[at]) << 8) | np.int64(buf[at + 1])


@njit(cache=True, inline="always")
def image_contexts(ictx, h, buf, g0, c0, c1, j, binary):
    """The image model's contexts of bit ``j`` (a pixel): the pixels before it in its row and around it in
    the three rows above (a row is the record length), each a 16-bit index; ictx[0] = -1 (off) where the
    history holds no record length of 8 bytes or more, not three rows yet, or the recent bytes are mostly
    text (``binary``, of 256, below half: lmzip.cm.model's running share of bytes that are not)."""
    r, k = h[RLEN], h[FILL]
    if r < 8 or k < 3 * r + 1 or binary < 128:
        ictx[0] = -1
        return
    s = 13 - j  # the pixel above sits at bit 15 - j of _row3, its right neighbours below
    u1, u2, u3 = _row3(buf, g0 + k - r), _row3(buf, g0 + k - 2 * r), _row3(buf, g0 + k - 3 * r)
    a1, a2 = (u1 >> s) & 0x1F, (u2 >> s) & 0x1F  # five pixels centred above, and two rows above
    r0 = ((c1 << j) | (c0 ^ (1 << j))) & 0xFF  # this row's last eight pixels
    ictx[0] = (r0 & 7) | (a1 << 3) | ((a2 & 0xE) << 7)
    ictx[1] = 0x1000 | r0 | (a1 << 8)
    ictx[2] = 0x4000 | (r0 & 3) | (((u1 >> (s - 1)) & 0x7F) << 2) | (a2 << 9)
    ictx[3] = ((r0 & 0x3F) | (((u1 >> (s - 3)) & 0x1FF) << 6)) ^ (((u2 >> (s - 2)) & 0x7F) << 9)
    ictx[4] = (r0 & 0xF) | (a1 << 4) | (a2 << 9) | (((u3 >> (s + 1)) & 3) << 14)
    if ictx.shape[0] > N_IMAGE:
        wide_image_contexts(ictx, h, c0, j, s, u1, u2, u3, a1, a2)


@njit(cache=True, inline="always")
def wide_image_contexts(ictx, h, c0, j, s, u1, u2, u3, a1, a2):
    """Version 5's six more image contexts (ictx[5:11]): up to 16 pixels of this row, 14 of the row above, a
    column three wide through three rows, and a hash of 26 pixels around."""
    rw = (((h[C4] & 0xFFFF) << j) | (c0 ^ (1 << j))) & 0xFFFF  # this row's last 16 pixels
    ictx[5] = (rw & 0x1F) | (((u1 >> (s - 3)) & 0x7FF) << 5)
    ictx[6] = (rw & 1) | (a1 << 1) | (a2 << 6) | (((u3 >> s) & 0x1F) << 11)
    ictx[7] = ((u1 >> (s - 5)) & 0x3FFF) | ((rw & 3) << 14)
    ictx[8] = (rw & 0xFFF) | (((u1 >> (s + 1)) & 7) << 12) | (((u2 >> (s + 2)) & 1) << 15)
    ictx[9] = ((rw & 3) | (((u1 >> (s + 1)) & 7) << 2) | (((u2 >> (s + 1)) & 7) << 5) | (((u3 >> (s + 1)) & 7) << 8)
               | (((u1 >> (s - 2)) & 7) << 11))
    ictx[10] = hash2((rw & 0xFF) | (((u1 >> (s - 3)) & 0x7FF) << 8) | (((u2 >> (s - 1)) & 0x7F) << 19), 22) & 0xFFFF


@njit(cache=True, inline="always")
def image_inputs(x, at, it, ictx):
    """The image model's inputs at x[at:]: each context's learned p, stretched (0 where it is off)."""
    for m in range(it.shape[0]):
        x[at + m] = stretch(np.int64(it[m, ictx[m] & 0xFFFF]) >> 20) if ictx[0] >= 0 else 0


@njit(cache=True, inline="always")
def image_learn(it, ictx, y):
    """The image model's entries after bit ``y``."""
    if ictx[0] >= 0:
        for m in range(it.shape[0]):
            i = ictx[m] & 0xFFFF
            it[m, i] = adapt(np.int64(it[m, i]), y, SM_LIMIT)
