"""Version 20's letters: two hashed contexts of the current word's spelling and case, what paq8px's text model keeps
as masks of its characters' classes (vowels and consonants, capitals).

    the word's letters as vowels and consonants (a i o u, e, y, the others; the last twelve) + its last letter or
    digit + its length (to 15)
    which of the current word and the two before hold a capital + which of the word's last eight letters are
    capitals + its length (to 15); between words, + the gap
"""

from __future__ import annotations

from numba import njit

from lmzip.cm.clauses import LINE_AT
from lmzip.cm.history import CASES, GAP, TEXT, W0, WCASE, WLEN, WPAT
from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.parts import hash2

AT = LINE_AT + 1  # the first letters context's row among the hashed models, after version 20's line key
N_LETTERS = 2


@njit(**UNCOUNTED)  # called, not inlined, as lmzip.cm.orders's: once a byte
def letter_contexts(ctx, h):
    """ctx[AT:AT + 2] of the byte after history ``h`` (the module's two)."""
    wlen = min(h[WLEN], 15)
    ctx[AT] = hash2(h[WPAT] | ((h[TEXT] & 0xFF) << 24), 98 + (wlen << 8))
    ctx[AT + 1] = hash2((h[CASES] & 7) | (h[WCASE] << 3) | (wlen << 11), 99 if h[W0] != 0 else h[GAP])


@njit(**UNCOUNTED)
def letter_done(h, c):
    """The letters' fields after byte ``c`` (`lmzip.cm.text.text_done` has counted the word's length)."""
    lc = c | 32
    if not 97 <= lc <= 122:
        return
    if h[WLEN] == 1:
        h[WPAT], h[WCASE] = 0, 0
    v = 1 if (lc == 97 or lc == 105 or lc == 111 or lc == 117) else 2 if lc == 101 else 3 if lc == 121 else 0
    h[WPAT] = ((h[WPAT] << 2) | v) & 0xFFFFFF
    h[WCASE] = ((h[WCASE] << 1) | (c < 97)) & 0xFF
