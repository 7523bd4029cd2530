"""Version 19's clauses: four hashed contexts of where the text stands between its punctuation marks, written for
what the orders and word models left to paq8px (the byte after a word: ',' ';' ')' or a blank; world192's lists
and parentheses cost counting 10-60% more than paq8px there). A clause is the text since the last punctuation
mark or bracket (in UTF-8 also the general, CJK and fullwidth marks, `wide_mark`); an inner text, the text since an open
bracket, until it closes. A word starts at a letter after none, at a CJK character, at a two-byte UTF-8 letter
(Cyrillic, Greek) after an ASCII byte that is no letter.

    the inner text's bytes (in none: the clause's bytes, a run of blanks as one blank)
    the open bracket or quote + the types of the last three bytes
    the last punctuation mark + the words since it (to 15) + the word's length (to 15) + the last two bytes' types
    the clause's first word + the word or gap + the words since the punctuation (to 7)

Over the sample they took 0.27% off (world192 0.50%, bible 0.38%, news 0.36%, book2 0.34%, xiyouji 0.33%, the kinds
set's code 0.76% and Chinese 0.58%; kennedy.xls +0.15%, pic +0.14%: benchmarks/results/cm-sample.md).

Version 20 adds a context of a record's fields, the key of the last line that held a ':' (its bytes before it) + this
line's bytes so far (`line_context`)."""

from __future__ import annotations

from numba import njit

from lmzip.cm.history import (
    C4,
    CLAUSE,
    CLAUSEN,
    CLAUSEW,
    GAP,
    INNER,
    LKCUR,
    LKEY,
    LKSET,
    LTEXT,
    OPEN,
    TYPES,
    W0,
    WLEN,
    WP,
)
from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.orders import AT as ORDERS_AT
from lmzip.cm.parts import hash2

AT = ORDERS_AT + 2  # the first clause context's row among the hashed models, after lmzip.cm.orders's two
N_CLAUSES = 4
LINE_AT = AT + N_CLAUSES  # version 20's line key context


@njit(**UNCOUNTED)  # called, not inlined, as lmzip.cm.orders's: once a byte
def clause_contexts(ctx, h):
    """ctx[AT:AT + 4] of the byte after history ``h`` (the module's four)."""
    n = h[CLAUSEN]
    words = (n >> 8) & 255
    ctx[AT] = hash2(h[INNER], 90) if h[INNER] != 0 else hash2(h[CLAUSE], 91)
    ctx[AT + 1] = hash2(h[OPEN] | ((h[TYPES] & 0x1FF) << 8), 92)
    ctx[AT + 2] = hash2((n & 255) | (min(words, 15) << 8) | (min(h[WLEN], 15) << 12) | ((h[TYPES] & 0x3F) << 17), 93)
    ctx[AT + 3] = hash2(hash2(h[CLAUSEW], h[W0] if h[W0] != 0 else h[GAP]), min(words, 7) + 94)


@njit(cache=True, inline="always")
def line_context(ctx, h):
    """Version 20's ctx[LINE_AT]: the key of the last line with a ':' (its bytes before it) + this line's bytes so
    far (a record's fields in their order)."""
    ctx[LINE_AT] = hash2(hash2(h[LKEY], h[LTEXT]), 97)


@njit(**UNCOUNTED)
def line_done(h, c):
    """Version 20's line fields after byte ``c``: at a newline the line's key, if it had a ':', becomes the last key."""
    if c == 10:
        if h[LKSET]:
            h[LKEY] = h[LKCUR]
        h[LKCUR], h[LKSET], h[LTEXT] = 0, 0, 0
        return
    h[LTEXT] = hash2(h[LTEXT], c)
    if h[LKSET] == 0:
        if c == 58:
            h[LKSET] = 1
        else:
            h[LKCUR] = hash2(h[LKCUR], c)


@njit(**UNCOUNTED)
def clause_done(h, c):
    """The clause fields after byte ``c`` (`lmzip.cm.text.text_done` has set its type, the word hashes theirs)."""
    t, before = h[TYPES] & 7, (h[TYPES] >> 3) & 7  # 0 a byte of 128 on, 1 a letter, 3 a blank, 5 a mark, 6 a bracket
    if c == 40 or c == 91 or c == 123:
        h[INNER] = hash2(c, 95)
    elif c == 41 or c == 93 or c == 125:
        h[INNER] = 0
    elif h[INNER] != 0:
        h[INNER] = hash2(h[INNER], c)
    if t == 5 or t == 6 or wide_mark(h[C4]):
        h[CLAUSE], h[CLAUSEN], h[CLAUSEW] = hash2(c, 96), c, 0
        return
    if t == 3 or t == 4:
        if before != 3 and before != 4:
            h[CLAUSE] = hash2(h[CLAUSE], 32)
    else:
        h[CLAUSE] = hash2(h[CLAUSE], c)
    words = (h[CLAUSEN] >> 8) & 255
    if (t == 1 and before != 1) or c >= 0xE0 or (0xC2 <= c <= 0xDF and before > 1):  # a word starts (a CJK
        words = min(words + 1, 255)  # character is one; a two-byte UTF-8 letter after no letter starts one)
        if words == 2:
            h[CLAUSEW] = h[WP]
    h[CLAUSEN] = (h[CLAUSEN] & 255) | (words << 8)


@njit(cache=True, inline="always")
def wide_mark(c4):
    """Whether the last three bytes (``c4``'s low 24 bits) are a punctuation mark in UTF-8: U+2000-203F (dashes,
    quotes, ellipsis), U+3000-303F (CJK: 、。「」), U+FF01-FF0F, U+FF1A-FF20 or U+FF3B-FF3F (fullwidth: ，：？！［］;
    not its digits U+FF10-FF19 nor its capitals U+FF21-FF3A)."""
    lead, c = (c4 >> 8) & 0xFFFF, c4 & 0xFF
    return lead == 0xE280 or lead == 0xE380 or (lead == 0xEFBC and (c <= 0x8F or 0x9A <= c <= 0xA0 or c >= 0xBB))
