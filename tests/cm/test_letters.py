"""lmzip.cm.letters and version 20's line key (lmzip.cm.clauses.line_done): the word's spelling and case, a record's
fields."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lmzip import cm
from lmzip.cm.clauses import line_done
from lmzip.cm.history import LKEY, LTEXT, N_STATE, WCASE, WLEN, WPAT
from lmzip.cm.letters import letter_done

NEWS = Path(__file__).parents[2] / "corpora" / "calgary" / "news"


def _fed(text: bytes) -> np.ndarray:
    """A history after ``text``, its word's length counted as lmzip.cm.text.text_done counts it."""
    h = np.zeros(N_STATE, dtype=np.int64)
    for c in text:
        h[WLEN] = h[WLEN] + 1 if 97 <= (c | 32) <= 122 else 0
        letter_done(h, c)
        line_done(h, c)
    return h


def test_a_word_is_kept_as_vowels_consonants_and_capitals():
    """Each letter two bits (a i o u 1, e 2, y 3, the others 0), each capital one bit; a new word starts afresh."""
    h = _fed(b"Strike the HeY")
    assert h[WPAT] == 0b00_10_11 and h[WCASE] == 0b101
    assert _fed(b"ab cd, Hey")[WPAT] == h[WPAT]


def test_a_line_key_is_the_last_lines_text_before_its_colon():
    """At a newline a line's bytes before its ':' become the key; a line with none leaves the key as it was."""
    key = _fed(b"Subject: x\n")
    assert key[LKEY] != 0 and key[LTEXT] == 0
    assert _fed(b"From: a\nSubject: y: z\nno key here\n")[LKEY] == key[LKEY]
    assert _fed(b"Subject: x\nFrom: a\n")[LKEY] != key[LKEY]


def test_the_line_key_and_letters_code_news_smaller():
    """Version 20 writes a news file's headers and text smaller than version 19, and decodes it."""
    text = NEWS.read_bytes()[:24000]
    v20, v19 = cm.compress(text, 7, version=20), cm.compress(text, 7, version=19)
    assert len(v20) < len(v19) and cm.decompress(v20) == text
