"""The CRLF transform is applied only where it is exactly reversible, and the codec undoes it."""

from __future__ import annotations

import pytest

from lmzip.coding import codec, transform
from lmzip.coding import format as fmt
from tests.conftest import TEXT


@pytest.mark.parametrize(
    "data, applies",
    [(b"a\r\nb\r\n", True), (b"a\r\r\nb\r\n", True), (b"a\r\nb\n", False), (b"no newline", False),
     (b"\r\n", True), (b"lone\rcr\r\n", True), (b"\n", False), (b"", False)],
)
def test_crlf_applies_only_when_reversible(data, applies):
    text, crlf = transform.prepare(data)
    assert crlf is applies
    assert transform.restore(text, crlf) == data
    if applies:
        assert b"\r\n" not in text or b"\r\r\n" in data


def test_codec_round_trips_crlf_files(gpt_model):
    data = (TEXT + b"\n").replace(b"\n", b"\r\n")
    blob, head, _ = codec.encode(data, gpt_model, codec.Settings())
    assert head.crlf and not head.stored and head.original_length == len(data)
    assert codec.decode(*fmt.unpack(blob), gpt_model) == data
    plain, _, _ = codec.encode(TEXT + b"\n", gpt_model, codec.Settings())
    assert len(blob) == len(plain)  # the same coded text, the same size
