"""Version 25's field and phrase contexts: five hashed contexts of what a record's field, a line and a phrase hold
(paq8px's word model keeps the like): the field a word stands in (the line key, version 20's: the bytes before the
':' of the last line that held one) + the word and the word before it, which in a gazetteer, a configuration or a
log repeat field by field where the same words elsewhere mean other things.

    the line key + the word or gap + the word before
    the line key + the word or gap + the two words before
    the line's first word + the previous byte
    the word + the words before it in its phrase (words joined by spaces, newlines or quotes; any other byte starts a
    new phrase)
    where this line starts + the previous byte (the bytes this line has used)
"""

from __future__ import annotations

from numba import njit

from lmzip.cm.groups import AT as GROUPS_AT
from lmzip.cm.groups import N_GROUPS
from lmzip.cm.history import C4, FWORD, LINE, LKEY, PH1, PH2, W0, WP, WPP
from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.parts import hash2, word_byte
from lmzip.cm.text import word_or_gap

AT = GROUPS_AT + N_GROUPS  # the first field context's row among the hashed models, after the character groups
N_FIELDS = 5


@njit(**UNCOUNTED)  # called, not inlined, as lmzip.cm.groups's: once a byte
def field_contexts(ctx, h):
    """ctx[AT:AT + 5] of the byte after history ``h`` (the module's five)."""
    c1 = h[C4] & 0xFF
    wg = word_or_gap(h)
    ctx[AT] = hash2(hash2(h[LKEY], wg), h[WP] + 112)
    ctx[AT + 1] = hash2(hash2(h[LKEY], wg), hash2(h[WP], h[WPP]) + 114)
    ctx[AT + 2] = hash2(hash2(h[FWORD], c1), 109)
    ctx[AT + 3] = hash2(hash2(h[W0], h[PH1]), h[PH2] + 110)
    ctx[AT + 4] = hash2(hash2(h[LINE], c1), 108)


@njit(**UNCOUNTED)
def phrase_done(h, c, w_before):
    """The phrase after byte ``c`` (``w_before``: the word hash before it): PH1, PH2 the last two words of the
    phrase before the current one; a space or newline after a word moves them on, a quote or another blank keeps
    them, any other byte ends the phrase."""
    if word_byte(c):
        return
    if (c == 32 or c == 10) and w_before != 0:
        h[PH2], h[PH1] = h[PH1], w_before
    elif c != 32 and c != 10 and c != 39 and c != 34:
        h[PH2], h[PH1] = 0, 0
