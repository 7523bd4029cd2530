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
