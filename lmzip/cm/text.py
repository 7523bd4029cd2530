"""The text models beyond the orders: version 4's word and line models; version 5's contexts of prose, fields and
tables (a keyword before ':' or '=', the gap between words, letters and digits whatever lies between, the types of
bytes, an open bracket, the line above) and a second match model over the last LONG bytes; version 7's column
models (where a wrapped line breaks, what a column holds); version 10's words further back, stems and lines;
version 17's weight sets by the text's shape (`shape_set`, `space_set`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.history import (
    CASES,
    FILL,
    FWORD,
    GAP,
    GAPW,
    GROUPS,
    KEY,
    LINE,
    LLEN,
    LPTR,
    OPEN,
    PLINE,
    RUNS,
    SHAPE,
    SHAPEW,
    SP1,
    SP2,
    SPACES,
    STEM,
    TEXT,
    TYPES,
    VMATCH,
    W0,
    WLEN,
    WP,
    WP3,
    WPP,
)
from lmzip.cm.match import pair_inputs
from lmzip.cm.parts import hash2

LONG = 20              # the long match model looks up the last LONG bytes
SHAPE_BITS = 16        # version 17's shape and spacing mixers: their weight sets, hashed
LONG_STATES = 64       # its state map: the length (16 steps) x whether the match model expects the same byte x the bit


@njit(cache=True, inline="always")
def line_contexts(ctx, h, buf, g0, col, c1):
    """Version 4's word and line models (ctx[15:18]): the current word + the word two back; the line's first
    four bytes (a field's name, a record's key) + the current word, and + the column + the previous byte."""
    w0, line, k = h[W0], h[LINE], h[FILL]
    ctx[15] = hash2(hash2(w0, h[WPP]), 19)
    lead = 0
    for q in range(4):
        if line + q < k:
            lead = (lead << 8) | np.int64(buf[g0 + line + q])
    ctx[16] = hash2(hash2(lead, w0), 20)
    ctx[17] = hash2(hash2(lead, min(col, 255) | (c1 << 8)), 21)


@njit(cache=True, inline="always")
def text_contexts(ctx, h, c1, above):
    """Version 5's text models (ctx[18:22]): the word and the gap before it (or the gap and the word before
    it); the last keyword (a word before ':' or '=') + the word or gap; the last five letters and digits,
    whatever lies between; the classes of the last six bytes + the previous byte; then (ctx[22:26]) an open
    bracket or quote + the word or gap, the types of the last eight bytes + the previous byte, the word's
    length + the types of the last four, the byte ``above`` + how many bytes in a row agreed with the line
    above + the previous byte."""
    w0 = h[W0]
    if w0 != 0:
        ctx[18] = hash2(hash2(w0, h[GAPW]), 23)
        ctx[19] = hash2(hash2(h[KEY], w0), 24)
    else:
        ctx[18] = hash2(hash2(h[GAP], h[WP]), 25)
        ctx[19] = hash2(hash2(h[KEY], h[GAP]), 26)
    t = h[TEXT]
    ctx[20] = hash2(hash2(t & 0xFFFFFFFF, t >> 32), 27)
    g = h[GROUPS]
    ctx[21] = hash2(hash2(g & 0xFFFFFFFF, (g >> 32) | (c1 << 16)), 28)
    ctx[22] = hash2(hash2(h[OPEN], w0 if w0 != 0 else h[GAP]), 29)
    ctx[23] = hash2(hash2(h[TYPES], c1), 30)
    ctx[24] = hash2(min(h[WLEN], 15) | ((h[TYPES] & 0xFFF) << 4), 31)
    ctx[25] = hash2(hash2(above, min(h[VMATCH], 15) | (c1 << 8)), 32)


@njit(cache=True, inline="always")
def column_contexts(ctx, h, buf, g0, col, c1):
    """Version 7's column models (ctx[26:30]), the column ``col`` in the line (to 255) + whether the previous
    byte is a space; + the previous byte; + the line's first byte and the previous byte's class; + the previous
    line's length: where a wrapped line breaks, what a column of a table holds."""
    line = h[LINE]
    col = min(col, 255)
    first = np.int64(buf[g0 + line]) if col > 0 else 256
    ctx[26] = hash2(col | ((c1 == 32) << 8), 48)
    ctx[27] = hash2(col | (c1 << 8), 49)
    ctx[28] = hash2(col | (first << 8) | ((h[GROUPS] & 0xFF) << 17), 50)
    ctx[29] = hash2(col | (min(line - h[PLINE], 255) << 8), 51)


@njit(cache=True, inline="always")
def word_or_gap(h):
    """The current word's hash, or between words the gap's + 1 (never a word's 0): what the word contexts stand on."""
    return h[W0] if h[W0] != 0 else h[GAP] + 1


@njit(cache=True, inline="always")
def word_contexts(ctx, h):
    """Version 10's word models (ctx[30:38]): the word or gap + the three words before it; + the second and third
    words back; the line's first word + the word or gap; + the previous word's stem (its first five letters); + the
    stems of the two words before; + the word before, the gap before it and the word before that; + the previous
    word's stem and the second word back; + the 1 KiB block it is in."""
    wp, wpp, wp3 = h[WP], h[WPP], h[WP3]
    wg = word_or_gap(h)
    ctx[30] = hash2(hash2(wg, wp), hash2(wpp, wp3) + 33)
    ctx[31] = hash2(hash2(wg, wpp), wp3 + 34)
    ctx[32] = hash2(hash2(wg, h[FWORD]), 35)
    ctx[33] = hash2(hash2(wg, h[SP1]), 36)
    ctx[34] = hash2(hash2(wg, h[SP1]), h[SP2] + 37)
    ctx[35] = hash2(hash2(wg, wp), hash2(h[GAPW], wpp) + 38)
    ctx[36] = hash2(hash2(wg, h[SP1]), wpp + 39)
    ctx[37] = hash2(hash2(wg, h[FILL] >> 10), 40)


@njit(cache=True, inline="always")
def word_done(h, c, wp_before, wpp_before):
    """Version 10's word history after byte ``c`` (``wp_before``, ``wpp_before``: the previous words before it): the
    third word back, the line's first word, the current word's stem and the two words' before."""
    if h[WP] != wp_before:  # a word ended
        h[WP3] = wpp_before
        h[SP2], h[SP1], h[STEM] = h[SP1], h[STEM], 0
        if h[FWORD] == 0:
            h[FWORD] = h[WP]
    if c == 10:
        h[FWORD] = 0
    if h[W0] != 0 and h[WLEN] <= 5:
        h[STEM] = h[W0]


@njit(cache=True, inline="always")
def char_class(c):
    """A byte's class as the text models and the character groups (lmzip.cm.groups) see it: 48 for a digit, 97 for a
    small letter, 65 for a capital, else the byte itself."""
    if 48 <= c <= 57:
        return 48
    if 97 <= c <= 122:
        return 97
    if 65 <= c <= 90:
        return 65
    return c


@njit(cache=True, inline="always")
def text_done(h, c, w_before, buf, g0):
    """The text models' history after byte ``c``, already in ``buf`` (the stream's bytes at buf[g0:]; ``w_before``:
    the word hash before it)."""
    lc = c + 32 if 65 <= c <= 90 else c
    k, line, pline = h[FILL] - 1, h[LINE], h[PLINE]  # c's position; lines as byte_done left them
    if c == 10:
        h[VMATCH] = 0
    else:  # a byte that is no newline left the lines as they were: c's column, the byte above it
        col = k - line
        h[VMATCH] = h[VMATCH] + 1 if pline + col < line and buf[g0 + pline + col] == c else 0
    if h[W0] != 0:
        if w_before == 0:
            h[GAPW], h[GAP] = h[GAP], 0
            h[SHAPEW], h[SHAPE] = h[SHAPE], 0
            h[CASES] = (h[CASES] << 1) & 6
        if 65 <= c <= 90:
            h[CASES] |= 1
    else:
        h[GAP] = hash2(h[GAP], c)
        h[SHAPE] = hash2(h[SHAPE], 48 if 48 <= c <= 57 else c)
        if (c == 58 or c == 61) and w_before != 0:
            h[KEY] = w_before
    if (48 <= c <= 57) or (97 <= lc <= 122):
        h[TEXT] = ((h[TEXT] << 8) | lc) & 0xFFFFFFFFFF
    g = char_class(c)
    if c >= 0xF0:
        g = 1
    elif c >= 0xE0:
        g = 2
    elif c >= 0xC0:
        g = 3
    elif c >= 0x80:
        g = 4
    h[GROUPS] = ((h[GROUPS] << 8) | g) & 0xFFFFFFFFFFFF
    if 97 <= lc <= 122:
        t, h[WLEN] = 1, h[WLEN] + 1
    else:
        h[WLEN] = 0
        if 48 <= c <= 57:
            t = 2
        elif c == 32:
            t = 3
        elif c == 10:
            t = 4
        elif c == 46 or c == 44 or c == 59 or c == 58 or c == 33 or c == 63:
            t = 5
        elif c == 40 or c == 41 or c == 91 or c == 93 or c == 123 or c == 125 or c == 34 or c == 39:
            t = 6
        else:
            t = 7 if c < 128 else 0
    h[TYPES] = ((h[TYPES] << 3) | t) & 0xFFFFFF
    sp, pu = h[SPACES] << 1, (h[SPACES] >> 8) << 1
    h[SPACES] = ((sp | (t == 3 or t == 4)) & 0xFF) | (((pu | (t == 5)) & 0xFF) << 8)
    if t != 1 or (h[RUNS] & 7) != 1:  # a run of letters is one
        h[RUNS] = ((h[RUNS] << 3) | t) & 0xFFFFFF
    if c == 40 or c == 91 or c == 123 or c == 34:
        h[OPEN] = c if not (c == 34 and h[OPEN] == 34) else 0
    elif c == 41 or c == 93 or c == 125:
        h[OPEN] = 0


@njit(cache=True, inline="always")
def long_done(h, c, buf, g0, cap, ltab, ebyte):
    """Version 5's long match after byte ``c`` (already in ``buf``, the stream's bytes at buf[g0:], segments of
    ``cap`` bytes; ``ebyte``: the byte it expected): extended, or looked up by a hash of the last LONG bytes and
    held if at least LONG bytes really agree, within what both segments hold."""
    k = h[FILL] - 1
    mlen, mptr = h[LLEN], h[LPTR]
    if mlen > 0 and ebyte == c:
        mlen, mptr = min(mlen + 1, 65535), mptr + 1
    else:
        mlen = 0
    if k + 1 >= LONG:
        x = 0
        gi = g0 + k
        for q in range(LONG):
            x = hash2(x, np.int64(buf[gi - q]))
        e = x & (ltab.shape[0] - 1)
        cand = np.int64(ltab[e])
        if mlen == 0 and cand > 0:
            room = min(cand - (cand - 1) // cap * cap, k + 1)  # bytes both sides have in their segments
            ln = 0
            while ln < 64 and ln < room and buf[cand - 1 - ln] == buf[gi - ln]:
                ln += 1
            if ln >= LONG:
                mlen, mptr = ln, cand
        ltab[e] = gi + 1
    h[LLEN], h[LPTR] = mlen, mptr


@njit(cache=True, inline="always")
def long_index(llen, lb, ebyte, mi, c0, j):
    """The long match model's state-map entry for bit ``j`` (``lb``: the byte it expects): its length, whether
    the match model expects the same bit, the bit it expects; -1 where it holds none or the bits so far left
    its byte."""
    if llen == 0:
        return -1
    if ((lb | 256) >> (8 - j)) != c0:
        return -1
    bit = (lb >> (7 - j)) & 1
    same = 1 if mi >= 0 and ((ebyte >> (7 - j)) & 1) == bit else 0
    return (min(llen >> 3, 15) << 2) | (same << 1) | bit


@njit(cache=True, inline="always")
def long_inputs(x, at, lsm, li, llen):
    """The long match model's two inputs at x[at:]: its learned p, its length signed by the expected bit."""
    pair_inputs(x, at, lsm, li, llen, 64, 4)


@njit(cache=True, inline="always")
def shape_set(h, c0):
    """Version 17's shape mixer's weight set: the partial byte ``c0`` x the types of the last five runs of bytes (a
    run of letters is one) x which of the current word and the two before hold a capital x the word's length (0-3;
    paq8px's text model picks its mixers' weights by such masks), hashed to SHAPE_BITS."""
    x = c0 | ((h[RUNS] & 0x7FFF) << 8) | ((h[CASES] & 7) << 23) | (min(h[WLEN], 3) << 26)
    return hash2(x, 77) & ((1 << SHAPE_BITS) - 1)


@njit(cache=True, inline="always")
def space_set(h, c0):
    """Version 17's spacing mixer's weight set: the partial byte ``c0`` x which of the last eight bytes were spaces or
    newlines x which were punctuation (SPACES, kept per byte by `text_done`) x whether the current word holds a
    capital, hashed to SHAPE_BITS."""
    x = c0 | (h[SPACES] << 8) | ((h[CASES] & 1) << 24)
    return hash2(x, 79) & ((1 << SHAPE_BITS) - 1)


@njit(cache=True, inline="always")
def number_context(ctx, h):
    """Version 17's number model (ctx[46]): in a gap, its shape (every digit one digit: "d,ddd (") + the keyword; in a
    word, the word + the shape of the gap before it. A table's or a fact sheet's figures differ, their shapes recur."""
    if h[W0] != 0:
        ctx[46] = hash2(hash2(h[W0], h[SHAPEW]), 80)
    else:
        ctx[46] = hash2(hash2(h[KEY], h[SHAPE]), 81)
