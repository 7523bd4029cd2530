"""lmzip.cm.clauses: version 19's contexts of the text between punctuation marks."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmzip import cm
from lmzip.cm.clauses import wide_mark

NEWS = Path(__file__).parents[2] / "corpora" / "calgary" / "news"


@pytest.mark.parametrize("char, mark", [("、", True), ("。", True), ("「", True), ("，", True), ("：", True),
                                        ("？", True), ("—", True), ("“", True), ("あ", False), ("漢", False),
                                        ("Ａ", False), ("１", False)])
def test_a_wide_mark_is_utf8_punctuation(char, mark):
    """CJK, fullwidth and general punctuation end a clause; kana, ideographs, fullwidth letters and digits do not."""
    code = char.encode()
    assert len(code) == 3 and wide_mark(int.from_bytes(code, "big")) == mark


def test_the_clauses_code_lists_and_brackets_smaller():
    """Version 19 writes text of clauses, lists and parentheses smaller than version 18, and decodes it."""
    text = NEWS.read_bytes()[:24000]
    v19, v18 = cm.compress(text, 7, version=19), cm.compress(text, 7, version=18)
    assert len(v19) < len(v18) and cm.decompress(v19) == text


def test_cjk_and_cyrillic_clauses_round_trip():
    """Words and marks of UTF-8 scripts (a CJK character a word, a Cyrillic letter after a blank starting one)."""
    text = ("「桃太郎」は、昔話です。おじいさんとおばあさん，山へ行きました！" * 20
            + "Мой дядя самых честных правил, когда не в шутку занемог (он уважать себя заставил). " * 20).encode()
    assert cm.decompress(cm.compress(text, 7)) == text
