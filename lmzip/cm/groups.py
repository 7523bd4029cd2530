"""Version 24's character groups: four hashed contexts of the text's bytes as groups, a run of digits, of capitals,
of small letters or of bytes above 127 one group, every other byte its own (paq8px's char-group model does the like):
the shape of a line whatever its words and numbers ("Aa a: 0,0 a; a a 0%"), which recurs in records, tables, code
and markup where the words and figures differ.

    the last twelve groups, + whether the last byte joined a run (as each context below)
    the last five groups + the last three bytes
    the last seven groups + the last two bytes
    the last four groups
"""

from __future__ import annotations

from numba import njit

from lmzip.cm.history import C4, CG1, CG2
from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.letters import AT as LETTERS_AT
from lmzip.cm.letters import N_LETTERS
from lmzip.cm.parts import hash2
from lmzip.cm.text import char_class

AT = LETTERS_AT + N_LETTERS  # the first group context's row among the hashed models, after the letters
N_GROUPS = 4
JOINED = 1 << 40  # CG2's flag: the last byte joined its group's run


@njit(**UNCOUNTED)  # called, not inlined, as lmzip.cm.letters's: once a byte
def group_contexts(ctx, h):
    """ctx[AT:AT + 4] of the byte after history ``h`` (the module's four; hash2 reads 32 bits of each argument, so
    CG1's eight groups go in as its two halves)."""
    g1, g2 = h[CG1], h[CG2]
    lo, hi = g1 & 0xFFFFFFFF, (g1 >> 32) & 0xFFFFFFFF
    f = (g2 >> 40) << 8
    ctx[AT] = hash2(hash2(hash2(lo, hi), g2 & 0xFFFFFFFF), 103 + f)
    ctx[AT + 1] = hash2(hash2(hash2(lo, hi & 0xFF), h[C4] & 0xFFFFFF), 104 + f)
    ctx[AT + 2] = hash2(hash2(hash2(lo, hi & 0xFFFFFF), h[C4] & 0xFFFF), 105 + f)
    ctx[AT + 3] = hash2(lo, 106 + f)


@njit(**UNCOUNTED)
def group_done(h, c):
    """The groups after byte ``c``: CG1 the last eight groups (one a byte), CG2 the four before them, and the flag."""
    g = char_class(c) if c < 128 else 128
    if (g == 48 or g == 65 or g == 97 or g == 128) and (h[CG1] & 0xFF) == g:
        h[CG2] |= JOINED
        return
    h[CG2] = ((h[CG2] << 8) | ((h[CG1] >> 56) & 0xFF)) & 0xFFFFFFFF
    h[CG1] = ((h[CG1] & 0xFFFFFFFFFFFFFF) << 8) | g
