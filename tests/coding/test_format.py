"""The .lmz container: exact header bytes, and a clear error for every kind of bad input."""

from __future__ import annotations

import struct
import zlib

import pytest

from lmzip.arith import versions
from lmzip.coding import codec, legacy
from lmzip.coding import format as fmt
from lmzip.coding.settings import Settings
from lmzip.errors import FormatError, IntegrityError
from tests.conftest import TEXT

GOLDEN_HEADER = bytes.fromhex(
    "894c4d5a080001000000000200" "0a00000000000000" "0c00000000000000" "78563412" + "11" * 16
    + "0800000000000000" "02000000" "04" "646f6d6f"
)


# version 9: the same fields, flags without "last", then block number 2 and block size 10 after the name
GOLDEN_HEADER_9 = bytes.fromhex(
    "894c4d5a090001000000000200" "0a00000000000000" "0900000000000000" "78563412" + "11" * 16
    + "0800000000000000" "02000000" "04" "646f6d6f" "02000000" "0a000000"
)

# version 10: version 9's layout (a frame coded by a model is written alike but for the version byte)
GOLDEN_HEADER_10 = GOLDEN_HEADER_9[:4] + b"\x0a" + GOLDEN_HEADER_9[5:]
# a counting frame of version 10: flags "last" and "counting", arithmetic 5, no model, no tokens, name "cm-6"
GOLDEN_HEADER_COUNT = bytes.fromhex(
    "894c4d5a0a6005000000000000" "0a00000000000000" "0900000000000000" "78563412" + "00" * 16
    + "0000000000000000" "00000000" "04" "636d2d36" "00000000" "00004000"
)


# version 11: a frame coded with counting mixed in: the mix flag, and at byte 7 the counting level (6)
GOLDEN_HEADER_11 = (GOLDEN_HEADER_9[:4] + b"\x0b" + bytes([fmt.FLAG_MIX]) + GOLDEN_HEADER_9[6:7] + b"\x06"
                    + GOLDEN_HEADER_9[8:])
GOLDEN_HEADER_12 = GOLDEN_HEADER_11[:4] + b"\x0c" + GOLDEN_HEADER_11[5:8] + b"\x09" + GOLDEN_HEADER_11[9:]  # 8: cm 9


def _pack(h: fmt.Header) -> bytes:
    """A header's bytes in its own version's layout (formats 8-10: lmzip.coding.legacy)."""
    return h.pack() if h.version == fmt.VERSION else legacy.pack(h)


def sample_header(version: int = 8) -> fmt.Header:
    if version == 8:
        return fmt.Header(10, 0x12345678, model_id=b"\x11" * 16, model_name="domo", n_tokens=8, segment_length=2,
                          payload_length=12, groups=3, version=8, block_size=0)
    if version == 0:  # a counting frame
        return fmt.Header(10, 0x12345678, counting=True, arith=versions.COUNTING, model_name="cm-6", payload_length=9,
                          version=10)
    return fmt.Header(10, 0x12345678, model_id=b"\x11" * 16, model_name="domo", n_tokens=8, segment_length=2,
                      payload_length=9, groups=3, block=2, block_size=10, last=False, version=version,
                      mix=version >= 11, mix_level=6 if version >= 11 else 0,
                      mix_version={11: 1, 12: 9}.get(version, 0))


@pytest.mark.parametrize("version, golden", [(8, GOLDEN_HEADER), (9, GOLDEN_HEADER_9), (10, GOLDEN_HEADER_10),
                                             (11, GOLDEN_HEADER_11), (12, GOLDEN_HEADER_12), (0, GOLDEN_HEADER_COUNT)])
def test_golden_header_bytes(version, golden):
    packed = _pack(sample_header(version))
    assert packed[:-4] == golden
    assert packed[-4:] == struct.pack("<I", zlib.crc32(golden))
    assert sample_header(version).size == len(packed) == 66 + 4 + (8 if version != 8 else 0)
    assert fmt.parse_header(packed) == sample_header(version)


def test_header_round_trip():
    h = sample_header()
    back, payload = fmt.unpack(_pack(h) + b"x" * 12)
    assert back == h and payload == b"x" * 12


@pytest.fixture(scope="module")
def blob(gpt_model):
    out, head, _ = codec.encode(TEXT, gpt_model, Settings())
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
        (lambda b: b[:4] + b"\x0d" + b[5:], "unsupported format version 13"),
        (lambda b: b[:4] + b"\x07" + b[5:], "pre-release lmzip, format 7"),
        (lambda b: b[:30] + bytes([b[30] ^ 1]) + b[31:], "corrupt header"),
        (lambda b: b[:62] + bytes([b[62] ^ 0x40]) + b[63:], "corrupt header"),
    ],
)
def test_bad_containers(blob, mangle, message):
    with pytest.raises(FormatError, match=message):
        fmt.unpack(mangle(blob))


def _recrc(blob: bytes, edit) -> bytes:
    """``blob`` with its header bytes edited and the header CRC recomputed (a crafted file)."""
    size = fmt.unpack(blob)[0].size
    body = bytearray(blob[:size])
    edit(body)
    return bytes(body[:-4]) + struct.pack("<I", zlib.crc32(bytes(body[:-4]))) + blob[size:]


@pytest.mark.parametrize("flag", [0x80])
def test_reserved_flags_rejected(blob, flag):
    body = bytearray(blob[: fmt.unpack(blob)[0].size])
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
        decode(_pack(h) + b"abd", None)


def test_group_streams_round_trip_and_reject_bad_tables():
    streams = [b"abcd", b"", b"12345678"]
    assert fmt.split_streams(fmt.join_streams(streams), 3) == streams
    assert fmt.join_streams([b"xy"]) == b"xy"
    with pytest.raises(FormatError, match="group"):
        fmt.split_streams(fmt.join_streams(streams)[:-1], 3)
    with pytest.raises(FormatError, match="group table"):
        fmt.split_streams(b"\0", 2)


def test_adapt_fields_round_trip():
    h = fmt.Header(5, 1, model_name="m", n_tokens=4, segment_length=4, arith=2,
                   adapt_optimizer="adam", adapt_lr=0.25, adapt_steps=32, payload_length=0)
    back, _ = fmt.unpack(_pack(h))
    assert back == h and back.size == h.size == 62 + 1 + 8 + 7 + 4


def test_a_machine_bound_file_of_0_2_0_is_refused_with_one_line():
    h = fmt.Header(5, 1, model_name="m", n_tokens=4, segment_length=4, arith=2,
                   adapt_optimizer="adam", adapt_lr=0.25, adapt_steps=32, payload_length=0)
    blob = bytearray(_pack(h))
    blob[6:11] = bytes([0, 0, 0, 1, 2])  # arithmetic 0 on cpu, float32, 1 thread, avx2: as 0.2.0 wrote it
    blob[-4:] = struct.pack("<I", zlib.crc32(bytes(blob[:-4])))
    with pytest.raises(FormatError, match="machine-bound --adapt file of lmzip 0.2.0.*the machine that wrote it"):
        fmt.unpack(bytes(blob))


def test_seed_field_round_trips():
    h = fmt.Header(5, 1, model_name="gpt-nano", n_tokens=4, segment_length=4, arith=2, adapt_optimizer="adam",
                   adapt_lr=0.25, adapt_steps=32, seed=2**63 - 5, payload_length=0)
    back, _ = fmt.unpack(_pack(h))
    assert back == h and back.size == h.size == 62 + 8 + 8 + 7 + 8 + 4


@pytest.mark.parametrize("edit, message", [
    (lambda b: b.__setitem__(6, 8), "unsupported arithmetic version 8"),
    (lambda b: b.__setitem__(6, 5), "a counting frame with a model's flags or arithmetic"),
    (lambda b: b.__setitem__(5, b[5] | fmt.FLAG_COUNT), "a counting frame with a model's flags or arithmetic"),
    (lambda b: b.__setitem__(6, 2), "arithmetic does not match the adapt flag"),
    (lambda b: b.__setitem__(6, 4), "arithmetic does not match the adapt flag"),
    (lambda b: b.__setitem__(9, 4), "reserved bytes 7-10 are not 0"),
    (lambda b: b.__setitem__(6, 0), "machine-bound --adapt file of lmzip 0.2.0"),
    (lambda b: b[49:57].__setitem__(slice(None), bytes(8)) or b.__setitem__(slice(49, 57), bytes(8)), "no tokens"),
    (lambda b: b.__setitem__(slice(49, 57), (2**40).to_bytes(8, "little")), "more tokens than original bytes"),
    (lambda b: b.__setitem__(slice(57, 61), bytes(4)), "zero segment length"),
])
def test_crafted_headers_are_refused(blob, edit, message):
    with pytest.raises(FormatError, match=message):
        fmt.unpack(_recrc(blob, edit))


def _claim(blob: bytes, n_tokens: int, original: int | None = None, segment: int | None = None,
           block_size: int | None = None) -> bytes:
    """A crafted file: the header promises more than the payload holds (CRC recomputed)."""
    def edit(b):
        b[49:57] = n_tokens.to_bytes(8, "little")
        if block_size is not None:  # format 9: after the model name, the block number, then the block size
            at = 62 + b[61] + 4
            b[at : at + 4] = block_size.to_bytes(4, "little")
        if original is not None:
            b[13:21] = original.to_bytes(8, "little")
        if segment is not None:
            b[57:61] = segment.to_bytes(4, "little")
    return _recrc(blob, edit)


def test_a_header_promising_far_more_tokens_than_the_payload_fails_cleanly(blob, gpt_model):
    crafted = _claim(blob, 10**6, original=10**6, segment=10**6)  # one segment of a million tokens
    with pytest.raises(IntegrityError, match="the coded words ran out|the range decoder failed"):
        decode(crafted, gpt_model)  # within a few hundred steps (the bound: the next test)


def test_the_decoder_stops_once_its_words_are_spent():
    import numpy as np

    from lmzip.coding.coder import Decoder, Encoder

    rows = np.full((1, 4), (2**24 - 4) // 4, dtype=np.float32)  # 2 bits a symbol
    enc = Encoder()
    for s in [1, 2, 3, 0, 1]:
        enc.code(np.array([s]), rows)
    dec = Decoder(enc.finish())
    got = [int(dec.code(None, rows)[0]) for _ in range(5)]
    assert got == [1, 2, 3, 0, 1]
    with pytest.raises(ValueError, match="the coded words ran out"):
        for _ in range(10_000):  # a crafted header asks for more tokens than were coded
            dec.code(None, rows)


def test_a_header_that_needs_more_memory_than_the_machine_has_says_so(blob, gpt_model):
    from lmzip.errors import LmzipError

    crafted = _claim(blob, 2**32 - 1, original=2**32 - 1, block_size=2**32 - 1)  # the largest block there is
    with pytest.raises(LmzipError, match=r"needs \d+\.\d GiB of memory to decode, \d+\.\d GiB available"):
        decode(crafted, gpt_model)


def test_the_memory_estimate_grows_with_the_claim():
    h = sample_header()
    small = fmt.decode_memory(h)
    h.n_tokens, h.original_length = 8 * 10**9, 9 * 10**9
    assert fmt.decode_memory(h) > 100 * 2**30 > small > 0
    h.stored = True
    assert fmt.decode_memory(h) == 0


def test_the_field_table_reads_what_pack_wrote():
    h = sample_header()
    b = _pack(h)
    got = {k: struct.unpack_from(f, b, off)[0] for k, (off, f) in fmt.FIELDS.items()}
    assert got == {"flags": 0, "arith": h.arith, "groups": h.groups - 1, "original": h.original_length,
                   "payload": h.payload_length, "tokens": h.n_tokens, "segment": h.segment_length,
                   "name_length": len(h.model_name)}


def test_the_last_flag_is_a_format_9_flag(blob):  # and of formats 10-12
    """Format 8 files have no blocks: there bit 5 of the flags is reserved."""
    h = fmt.unpack(blob)[0]
    assert h.version == 12 and h.last and blob[5] & fmt.FLAG_LAST
    old = fmt.Header(5, 1, stored=True, payload_length=5, version=8, block_size=0)
    raw = bytearray(_pack(old))
    raw[5] |= fmt.FLAG_LAST
    raw[-4:] = struct.pack("<I", zlib.crc32(bytes(raw[:-4])))
    with pytest.raises(FormatError, match="unsupported header flags"):
        fmt.parse_header(bytes(raw))


def _doc_table(heading: str) -> list[tuple[str, str, str]]:
    """The rows (offset or "", size, field) of the table under ``heading`` in docs/format.md."""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "format.md").read_text()
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith(("| offset", "| size"))]
    return [(r[0], r[1], r[2]) if len(r) >= 3 and r[0][:1].isdigit() and r[1][:1].isdigit() else ("", r[0], r[1])
            for r in rows]


def test_the_format_document_matches_the_code():
    """docs/format.md, the one description of the layout: its fixed offsets and sizes are the code's."""
    from lmzip.cm import format as cmfmt
    from lmzip.coding import header, short

    fixed = {int(o): int(n) for o, n, _ in _doc_table("## The ordinary frame") if o.isdigit() and n.isdigit()}
    assert sorted(fixed) == [sum(n for o, n in fixed.items() if o < at) for at in sorted(fixed)]  # no gap, no overlap
    assert sum(fixed.values()) == header._FIXED.size  # the fixed part: 62 bytes
    for name, (at, form) in header.FIELDS.items():
        assert fixed.get(at) == struct.calcsize(form), name
    rows = _doc_table("## The ordinary frame")
    assert header.MAGIC.hex(" ").upper() in rows[0][2] and f"({header.VERSION};" in rows[1][2]
    srows = _doc_table("## The short frame")
    assert short.MAGIC.hex(" ").upper() in srows[0][2] and f"({short.VERSION - 1}, or {short.VERSION}" in srows[1][2]
    cm = [(int(o), int(n)) for o, n, _ in _doc_table("## The counting stream") if o.isdigit() and n.isdigit()]
    assert cm == [(0, 4), (4, 1), (5, 1), (6, 8), (14, 4)] and sum(n for _, n in cm) == cmfmt.HEADER_BYTES
