"""Every byte string round-trips through both tokenizers."""

from __future__ import annotations

import os

from lmzip.models.tokenizer import ByteTokenizer, tokenizer_from_json
from tests.conftest import TEXT


def test_bytes_tokenizer():
    t = ByteTokenizer()
    data = bytes(range(256))
    assert t.decode(t.encode(data)) == data
    assert tokenizer_from_json(t.to_json()).kind == "bytes"


def test_bpe_round_trips_any_bytes(bpe):
    assert bpe.vocab_size == 300
    for data in (TEXT, bytes(range(256)), os.urandom(2000), "café ☕ \r\n\t".encode(), b"\xff\xfe\x00"):
        ids = bpe.encode(data)
        assert bpe.decode(ids) == data
    assert len(bpe.encode(TEXT)) < len(TEXT) / 2  # it merges
    again = tokenizer_from_json(bpe.to_json())
    assert list(again.encode(TEXT)) == list(bpe.encode(TEXT))


def _whole(tok, data: bytes) -> list[int]:
    return tok._tok.encode(data.decode("latin-1"), add_special_tokens=False).ids


def test_bpe_in_pieces_gives_the_whole_texts_tokens():
    from pathlib import Path

    from lmzip.models import registry, tokenizer

    tok = registry.load().tokenizer
    alice = (Path(__file__).parents[2] / "corpora" / "canterbury" / "alice29.txt").read_bytes()[:40_000]
    odd = "a \n\nb\t\t c  \x1c d\xa0 e\x85 f \r\n g.\n\n  \n".encode("latin-1") * 300
    for data in (alice, odd, alice.replace(b"\r\n", b"\n") + odd):
        text = data.decode("latin-1")
        for size in (7, 100, 1000):
            parts = list(tokenizer.chunks(text, size))
            assert "".join(parts) == text and max(map(len, parts)) <= size and len(parts) >= len(text) // size
        parts = list(tokenizer.chunks(text, 1000))  # every cut a clean one (alice29.txt has space runs of ~100)
        pairs = zip(parts, parts[1:], strict=False)
        assert len(parts) >= 10 and all(p[0] in " \n" and not q[-1].isspace() for q, p in pairs)
        old, tokenizer.CHUNK = tokenizer.CHUNK, 1000
        try:
            assert list(tok.encode(data)) == _whole(tok, data)
        finally:
            tokenizer.CHUNK = old
        assert tok.decode(tok.encode(data)) == data


def test_bpe_pieces_without_a_clean_cut_still_round_trip():
    from lmzip.models import registry, tokenizer

    tok = registry.load().tokenizer
    data = bytes(range(33, 127)) * 50  # no white space at all: hard cuts
    assert len(list(tokenizer.chunks(data.decode("latin-1"), 100))) == -(-len(data) // 100)
    old, tokenizer.CHUNK = tokenizer.CHUNK, 100
    try:
        assert tok.decode(tok.encode(data)) == data
    finally:
        tokenizer.CHUNK = old


CJK = "源氏物語は紫式部の作品です。「光る君」と呼ばれた。Война и мир — роман Толстого. ".encode() * 20


def test_utf8_pieces_make_cjk_and_cyrillic_characters_tokens():
    from lmzip.models.tokenizer import SPLIT, SPLIT_UTF8, train_bpe

    utf8, latin = train_bpe(iter([CJK, TEXT]), 400, SPLIT_UTF8), train_bpe(iter([CJK, TEXT]), 400, SPLIT)
    for data in (CJK, TEXT, bytes(range(256)), os.urandom(3000), CJK[:-1] + b"\xe3\x80", b"\xe3 \x81\n\xf0"):
        assert utf8.decode(utf8.encode(data)) == data
    # GPT-2's pieces split a character's bytes apart, so its merges cannot join them; these can
    assert len(utf8.encode(CJK)) * 2 < len(latin.encode(CJK))
    for ch in ("紫", "光", "Т"):  # some token holds the whole character
        assert any(ch.encode() in utf8.token_bytes(i) for i in range(utf8.vocab_size))
    assert not any("紫".encode() in latin.token_bytes(i) for i in range(latin.vocab_size))
    again = tokenizer_from_json(utf8.to_json())
    assert list(again.encode(CJK)) == list(utf8.encode(CJK))
