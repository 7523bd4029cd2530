"""The .lmz container: exact header bytes, and a clear error for every kind of bad input."""

from __future__ import annotations

import struct
import zlib

import pytest

from lmzip import codec
from lmzip import format as fmt
from lmzip.errors import FormatError, IntegrityError
from tests.conftest import TEXT

GOLDEN_HEADER = bytes.fromhex(
    "894c4d5a07000000010302000a000000000000000c000000000000007856341211111111111111111111111111111111"
    "0c000000000000000400000004646f6d6f"
)


def sample_header() -> fmt.Header:
    return fmt.Header(10, 0x12345678, model_id=b"\x11" * 16, model_name="domo", n_tokens=12, segment_length=4,
                      isa="avx512", payload_length=12, groups=3)


def test_golden_header_bytes():
    packed = sample_header().pack()
    assert packed[:-4] == GOLDEN_HEADER
    assert packed[-4:] == struct.pack("<I", zlib.crc32(GOLDEN_HEADER))
    assert sample_header().size == len(packed) == 65 + 4


def test_header_round_trip():
    h = sample_header()
    back, payload = fmt.unpack(h.pack() + b"x" * 12)
    assert back == h and payload == b"x" * 12


@pytest.fixture(scope="module")
def blob(gpt_model):
    out, head, _ = codec.encode(TEXT, gpt_model, codec.Settings())
    assert not head.stored
    return out


def decode(blob: bytes, model):
    head, payload = fmt.unpack(blob)
    return codec.decode(head, payload, model)


@pytest.mark.parametrize(
    "mangle, message",
    [
        (lambda b: b"", "bad magic"),
        (lambda b: b"hello world, not lmzip", "bad magic"),
        (lambda b: b[:3], "bad magic"),
        (lambda b: b[:10], "truncated header"),
        (lambda b: b[:66], "truncated header"),
        (lambda b: b[:-5], "truncated file"),
        (lambda b: b + b"\0", "trailing garbage"),
        (lambda b: b[:4] + b"\x09" + b[5:], "unsupported format version 9"),
        (lambda b: b[:4] + b"\x01" + b[5:], "corrupt header"),  # an older version byte: the CRC fails
        (lambda b: b[:30] + bytes([b[30] ^ 1]) + b[31:], "corrupt header"),
        (lambda b: b[:61] + bytes([b[61] ^ 0x40]) + b[62:], "corrupt header"),
    ],
)
def test_bad_containers(blob, mangle, message):
    with pytest.raises(FormatError, match=message):
        fmt.unpack(mangle(blob))


@pytest.mark.parametrize("version, flag", [(5, 0x80), (5, 0x10), (4, 0x08), (3, 0x04), (2, 0x02), (1, 0x02)])
def test_reserved_flags_rejected(blob, version, flag):
    body = bytearray(blob[: fmt.unpack(blob)[0].size])
    body[4] = version
    body[5] |= flag
    fixed = bytes(body[:-4]) + struct.pack("<I", zlib.crc32(bytes(body[:-4])))
    with pytest.raises(FormatError, match="unsupported header flags"):
        fmt.unpack(fixed + blob[len(body):])


@pytest.mark.parametrize("where", [0, 1, -1, -9])
def test_payload_bit_flip_is_an_integrity_error(blob, gpt_model, where):
    h = fmt.unpack(blob)[0]
    pos = h.size + where if where >= 0 else len(blob) + where
    bad = blob[:pos] + bytes([blob[pos] ^ 0x10]) + blob[pos + 1 :]
    with pytest.raises(IntegrityError, match="corrupt data"):
        decode(bad, gpt_model)


def test_stored_payload_corruption_detected():
    h = fmt.Header(3, fmt.crc32(b"abc"), stored=True, payload_length=3)
    assert fmt.verify(h, b"abc") == b"abc"
    with pytest.raises(IntegrityError):
        decode(h.pack() + b"abd", None)


def test_group_streams_round_trip_and_reject_bad_tables():
    streams = [b"abcd", b"", b"12345678"]
    assert fmt.split_streams(fmt.join_streams(streams), 3) == streams
    assert fmt.join_streams([b"xy"]) == b"xy"
    with pytest.raises(FormatError, match="group"):
        fmt.split_streams(fmt.join_streams(streams)[:-1], 3)
    with pytest.raises(FormatError, match="group table"):
        fmt.split_streams(b"\0", 2)


def test_adapt_fields_round_trip():
    h = fmt.Header(5, 1, model_name="m", n_tokens=4, segment_length=4, adapt_optimizer="adam", adapt_lr=0.25,
                   adapt_block=32, payload_length=0)
    back, _ = fmt.unpack(h.pack())
    assert back == h and back.size == h.size == 61 + 1 + 7 + 4


def test_seed_field_round_trips_and_older_versions_reject_the_flag():
    h = fmt.Header(5, 1, model_name="gpt-nano", n_tokens=4, segment_length=4, adapt_optimizer="adam",
                   adapt_lr=0.25, adapt_block=32, seed=2**63 - 5, payload_length=0)
    blob = h.pack()
    back, _ = fmt.unpack(blob)
    assert back == h and back.size == h.size == 61 + 8 + 7 + 8 + 4
    old = bytearray(fmt.Header(5, 1, model_name="m", n_tokens=4, segment_length=4, payload_length=0).pack())
    old[4], old[5] = 5, fmt.FLAG_SEED  # a version-5 header knows no seed flag
    old[-4:] = struct.pack("<I", zlib.crc32(bytes(old[:-4])))
    with pytest.raises(FormatError, match="unsupported header flags"):
        fmt.unpack(bytes(old))


def test_bf16_dtype_is_recorded_and_older_versions_reject_it():
    h = fmt.Header(5, 1, model_name="m", n_tokens=4, segment_length=4, dtype="bfloat16", payload_length=0)
    assert fmt.unpack(h.pack())[0].dtype == "bfloat16"
    old = bytearray(h.pack())
    old[4] = 5  # version 5 only ever wrote float32
    old[-4:] = struct.pack("<I", zlib.crc32(bytes(old[:-4])))
    with pytest.raises(FormatError, match="unsupported computation settings"):
        fmt.unpack(bytes(old))
