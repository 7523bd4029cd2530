"""The bilevel-image model (cm version 2; version 5 six more contexts): single pixels (bits) predicted from
the pixels before them in their row and around them in the rows above, a row being the record length.
Version 8 finds the row on its own (a vote the record model's noise does not reset), keeps text in Cyrillic,
CJK or UTF-16 out, adds five contexts and picks the sixth mixer's weight set, the final mixer's and the
order-2 APM's context by the pixels around."""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.history import C4, FILL, RLEN, ROW, ROWC, ROWN
from lmzip.cm.parts import SM_LIMIT, adapt, hash2
from lmzip.cm.tables import stretch

N_IMAGE = 5            # the image model's contexts (version 2)
N_IMAGE5 = 11          # version 5's: six more, wider and taller
N_IMAGE8 = 16          # version 8's: five more, taller, and by how many pixels around are black
IMAGE_BITS = 16        # its tables' entries: 2^16 each
# The gate (one int64 array, `image_gate`): the running share (of 256) of bytes that are not text; version 8's:
# the continuation bytes the open UTF-8 sequence still needs, the share of bytes that end a UTF-8 sequence (or a
# UTF-16 character of the ASCII range), the share of bytes all white or all black (0 or 255)
BINARY, PEND, UTF, FLAT = range(4)


@njit(cache=True, inline="always")
def _row3(buf, at):
    """The 24 pixels around byte ``at`` of the buffer: the byte before, it, the byte after."""
    return (np.int64(buf[at - 1]) << 16) | (np.int64(buf[at]) << 8) | np.int64(buf[at + 1])


@njit(cache=True, inline="always")
def image_contexts(ictx, h, buf, g0, c0, c1, j, gate):
    """The image model's contexts of bit ``j`` (a pixel): the pixels before it in its row and around it in
    the three rows above (a row is the record length; version 8: its own row, ROW), each a 16-bit index;
    ictx[0] = -1 (off) where the history holds no row of 8 bytes or more, not three rows yet, or the recent
    bytes are mostly text (``gate``). Returns version 8's weight set and APM context (`tall_image_contexts`;
    0, -1 before version 8; -1, -1 off)."""
    r, k = h[RLEN], h[FILL]
    if ictx.shape[0] > N_IMAGE5 and h[ROW] >= 8 and (r < 8 or gate[FLAT] >= 128):
        r = h[ROW]
    if r < 8 or k < 3 * r + 1 or gate[BINARY] < 128 or gate[UTF] >= 32:
        ictx[0] = -1
        return -1, -1
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
    if ictx.shape[0] > N_IMAGE5:
        return tall_image_contexts(ictx, buf, g0 + k, r, s, u1, u2, u3, r0)
    return 0, -1


@njit(cache=True, inline="always")
def image_gate(gate, c, c4, v8):
    """The gate after byte ``c`` (``c4``: the four bytes before it; ``v8``: version 8's shares too): text in
    Cyrillic or CJK scripts or in UTF-16 is no image, however many of its bytes are not ASCII."""
    gate[BINARY] += ((0 if _plain(c) else 256) - gate[BINARY]) >> 4
    if not v8:
        return
    end, pend = 0, gate[PEND]
    if 0x80 <= c <= 0xBF and pend > 0:
        pend -= 1
        end = 256 if pend == 0 else 0
    elif 0xC2 <= c <= 0xDF:
        pend = 1
    elif 0xE0 <= c <= 0xEF:
        pend = 2
    elif 0xF0 <= c <= 0xF4:
        pend = 3
    else:
        pend = 0
        if c == 0 and (c4 & 0xFF00) == 0 and _plain((c4 >> 16) & 0xFF) and _plain(c4 & 0xFF):
            end = 256  # UTF-16 text of the ASCII range: 0 X 0 Y (little-endian X 0 Y 0 alike)
    gate[PEND] = pend
    gate[UTF] += (end - gate[UTF]) >> 4
    gate[FLAT] += ((256 if c == 0 or c == 255 else 0) - gate[FLAT]) >> 6


@njit(cache=True, inline="always")
def image_sets(sel, at, iset, s2, gate):
    """Version 8's weight sets where the image model is on (``iset`` > 0): the sixth mixer's (its sets from
    ``at``) by the pixels around, and where most recent bytes are all white or all black, the final mixer's;
    returns the final mixer's."""
    if iset > 0:
        sel[5] = at + ((iset - 1) << 8)  # the low byte 0: a partial byte is never 0, text's sets differ
        if gate[FLAT] >= 128:
            return 192 + ((iset - 1) & 0x3F)
    return s2


@njit(cache=True, inline="always")
def _plain(c):
    """A printable ASCII byte, a tab or a line end."""
    return 32 <= c < 127 or c == 9 or c == 10 or c == 13


@njit(cache=True, inline="always")
def row_done(h, d, d_before):
    """Version 8's image row length after a byte seen ``d`` bytes after its value's last sighting (``d_before``
    the distance before): distances of 8 or more that repeat vote, the majority of the votes (Boyer-Moore) adopted
    once it leads by four. `image_contexts` reads it where the record model has no row of 8 or more, or where
    most recent bytes are all white or all black (a page: the record model's row, reset by every stray
    distance, is noise there)."""
    if d == d_before and 8 <= d < 65536:
        if d == h[ROWC]:
            h[ROWN] = min(h[ROWN] + 1, 64)
            if h[ROWN] >= 4:
                h[ROW] = d
        elif h[ROWN] > 0:
            h[ROWN] -= 1
        else:
            h[ROWC], h[ROWN] = d, 1


@njit(cache=True, inline="always")
def _above(buf, at, r, q, s):
    """Pixel ``s + 2`` of _row3 ``q`` rows above byte ``at`` (0 above the first row)."""
    return (np.int64(buf[at - q * r]) >> (s - 6)) & 1 if at >= q * r else 0


@njit(cache=True, inline="always")
def _ones(v):
    """How many bits of ``v`` are set."""
    n = 0
    while v:
        v &= v - 1
        n += 1
    return n


@njit(cache=True, inline="always")
def tall_image_contexts(ictx, buf, at, r, s, u1, u2, u3, r0):
    """Version 8's five more image contexts (ictx[11:16]): the column above through eight rows, two columns
    through five, how many of the 12 and 40 pixels around are black (dithered greys), 24 and 40 pixels
    around hashed; returns (1 + the pixels around: the last two in this row, five above, the one two above:
    the mixers' weight set, a hash of 24 pixels around: the order-2 APM's context)."""
    col = 0
    for q in range(1, 9):
        col |= _above(buf, at, r, q, s) << q
    y = r0 & 1
    u4 = _row3(buf, at - 4 * r) if at > 4 * r else 0
    u5 = _row3(buf, at - 5 * r) if at > 5 * r else 0
    col2 = 0
    for q, u in ((1, u1), (2, u2), (3, u3), (4, u4), (5, u5)):
        col2 |= ((u >> (s + 1)) & 3) << (2 * q)
    around12 = (r0 & 3) | (((u1 >> (s - 1)) & 0x1F) << 2) | (((u2 >> (s - 1)) & 0x1F) << 7)
    around24 = (r0 & 7) | (((u1 >> (s - 2)) & 0x7F) << 3) | (((u2 >> (s - 2)) & 0x7F) << 10) \
        | (((u3 >> (s - 2)) & 0x7F) << 17)
    frame = ((r0 >> 3) & 1) | (((u1 >> (s - 4)) & 1) << 1) | (((u2 >> (s - 4)) & 1) << 2) \
        | (((u3 >> (s - 4)) & 1) << 3) | (((u4 >> (s - 4)) & 0x1FF) << 4) | (((u3 >> (s + 4)) & 1) << 13) \
        | (((u2 >> (s + 4)) & 1) << 14) | (((u1 >> (s + 4)) & 1) << 15)
    n12, n24 = _ones(around12), _ones(around24)
    n40 = n24 + _ones(frame)
    ictx[11] = col | y
    ictx[12] = 0x200 | col2 | y
    ictx[13] = n40 | (n12 << 6) | (y << 10) | 0x800
    ictx[14] = hash2(around24, 52) & 0xFFFF
    ictx[15] = hash2(hash2(around24, frame), 53) & 0xFFFF
    return 1 + (y | (((u1 >> s) & 0x1F) << 1) | (((u2 >> (s + 2)) & 1) << 6) | (((r0 >> 1) & 1) << 7)), \
        hash2(around24, 54)


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
def image_bit(x, at, it, ictx, h, buf, g0, c0, c1, j, gate):
    """The image model's inputs at x[at:] for bit ``j`` (where the version has one); returns `image_contexts`'s
    weight set and APM context."""
    if not it.shape[0]:
        return 0, -1
    iset, ik = image_contexts(ictx, h, buf, g0, c0, c1, j, gate)
    image_inputs(x, at, it, ictx)
    return iset, ik


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
