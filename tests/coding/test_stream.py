"""Blocks (format 9): inputs of any size in frames of a fixed size, each checked on its own, streamed."""

from __future__ import annotations

import io
import os
import random

import pytest

from lmzip.coding import codec, stream, transform
from lmzip.coding import format as fmt
from lmzip.coding.settings import Settings
from lmzip.errors import FormatError, IntegrityError
from tests.conftest import TEXT

BLOCK = 256
SETTINGS = Settings(block_size=BLOCK, segment=64)


def _compress(data: bytes, model, settings: Settings = SETTINGS) -> tuple[bytes, stream.Totals]:
    out = io.BytesIO()
    totals = stream.compress_stream(io.BytesIO(data), out, model, settings, workers=1)
    return out.getvalue(), totals


def _decompress(blob: bytes, model) -> bytes:
    out = io.BytesIO()
    stream.decompress_stream(io.BytesIO(blob), out, lambda h: model, workers=1)
    return out.getvalue()


@pytest.fixture(scope="module")
def blocks(gpt_model) -> tuple[bytes, stream.Totals]:
    return _compress(TEXT[:700], gpt_model)


def test_round_trip_in_numbered_blocks_all_full_but_the_last(gpt_model, blocks):
    blob, t = blocks
    assert _decompress(blob, gpt_model) == TEXT[:700]
    assert [h.block for h in t.headers] == [0, 1, 2] and [h.last for h in t.headers] == [False, False, True]
    assert [h.original_length for h in t.headers] == [BLOCK, BLOCK, 700 - 2 * BLOCK]
    assert all(h.block_size == BLOCK and h.version == 12 for h in t.headers)
    assert t.original == 700 and t.compressed == len(blob)


def test_each_block_is_the_frame_its_bytes_alone_give(gpt_model, blocks):
    """A block does not depend on the others: the same input gives the same file, block by block."""
    blob, t = blocks
    at = 0
    for i, h in enumerate(t.headers):
        alone = codec.encode(TEXT[:700][i * BLOCK : (i + 1) * BLOCK], gpt_model, SETTINGS, workers=1,
                                    block=i, last=h.last)[0]
        assert blob[at : at + len(alone)] == alone
        at += len(alone)


def test_short_reads_give_the_same_file(gpt_model, blocks):
    """A pipe hands out a few bytes at a time: the blocks are still cut at the block size."""

    class Trickle(io.BytesIO):
        def read(self, n=-1):
            return super().read(min(n, random.Random(n).randint(1, 7)) if n and n > 0 else n)

    out = io.BytesIO()
    stream.compress_stream(Trickle(TEXT[:700]), out, gpt_model, SETTINGS, workers=1)
    assert out.getvalue() == blocks[0]
    back = io.BytesIO()
    stream.decompress_stream(Trickle(blocks[0]), back, lambda h: gpt_model, workers=1)
    assert back.getvalue() == TEXT[:700]


def test_a_file_cut_at_a_block_boundary_is_truncated_not_shorter(gpt_model, blocks):
    blob, t = blocks
    first = t.headers[0].size + t.headers[0].payload_length
    with pytest.raises(FormatError, match=r"truncated file \(block 1 and after are missing\)"):
        _decompress(blob[:first], gpt_model)
    with pytest.raises(FormatError, match="truncated file"):
        _decompress(blob[:-1], gpt_model)
    with pytest.raises(FormatError, match="trailing garbage"):
        _decompress(blob + b"\0", gpt_model)


def test_a_damaged_block_is_named(gpt_model, blocks):
    blob, t = blocks
    at = t.headers[0].size + t.headers[0].payload_length + t.headers[1].size + 3  # in block 1's payload
    bad = bytearray(blob)
    bad[at] ^= 0x10
    with pytest.raises(IntegrityError, match="^block 1: corrupt data"):
        _decompress(bytes(bad), gpt_model)


def test_blocks_out_of_order_are_refused(gpt_model, blocks):
    blob, t = blocks
    a = t.headers[0].size + t.headers[0].payload_length
    b = a + t.headers[1].size + t.headers[1].payload_length
    with pytest.raises(FormatError, match="block 1 where block 0 belongs"):
        _decompress(blob[a:b] + blob[:a] + blob[b:], gpt_model)


def test_frames_that_contradict_the_block_size_are_refused():
    h = fmt.Header(10, 0, stored=True, payload_length=10, block=0, block_size=8)
    with pytest.raises(FormatError, match="longer than the block size"):
        fmt.unpack(h.pack() + bytes(10))
    h = fmt.Header(4, 0, stored=True, payload_length=4, block=0, block_size=8, last=False)
    with pytest.raises(FormatError, match="not full"):
        fmt.parse_header(h.pack())


def test_an_empty_input_is_one_empty_stored_block(gpt_model):
    blob, t = _compress(b"", gpt_model)
    assert len(t.headers) == 1 and t.first.stored and t.first.last and _decompress(blob, gpt_model) == b""


def test_random_blocks_are_stored_without_running_the_model():
    class NoModel:  # any use of the model fails the test
        def __getattr__(self, name):
            raise AssertionError(f"the model was used ({name})")

    data = os.urandom(transform.UNIFORM_FROM + 1000)
    assert transform.looks_random(data) and not transform.looks_random(TEXT * (transform.UNIFORM_FROM // len(TEXT) + 1))
    assert not transform.looks_random(data[: transform.UNIFORM_FROM - 1])  # short blocks are always tried
    blob, t = _compress(data, NoModel(), Settings())
    assert t.first.stored and _decompress(blob, NoModel()) == data


def test_format_8_files_still_stream(gpt_model):
    from tests.make_golden import golden_model, golden_path

    old = golden_path("gpt", "", 8, 1).read_bytes()
    assert fmt.unpack(old)[0].version == 8
    assert _decompress(old, golden_model("gpt", "")) == (golden_path("gpt", "").parent / "golden.txt").read_bytes()
