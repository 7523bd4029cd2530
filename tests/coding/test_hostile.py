"""Hostile files, as property tests: whatever is done to a golden file, decoding returns the original
bytes or raises one LmzipError (the CLI's one line), and never runs on past its payload."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lmzip
from lmzip.coding import format as fmt
from lmzip.errors import LmzipError
from tests.make_golden import DATA, golden_model

BLOB = (DATA / "golden-gpt-v8.lmz").read_bytes()
MIXED = (DATA / "golden-lstm-mix-v8.lmz").read_bytes()
CHECK = settings(derandomize=True, deadline=None, database=None)


@pytest.fixture(scope="module")
def models():
    """Each golden file's model and the bytes it decodes to (decoded once, not per example)."""
    out = {BLOB: golden_model("gpt", ""), MIXED: golden_model("lstm", "-mix")}
    return {blob: (m, lmzip.decompress(blob, model=m, jobs=1)) for blob, m in out.items()}


def outcome(mutant: bytes, model_and_bytes) -> str:
    model, want = model_and_bytes
    try:
        got = lmzip.decompress(mutant, model=model, jobs=1)
    except LmzipError:
        return "clean"
    assert got == want, "a mutant decoded to other bytes without an error"
    return "harmless"


@settings(CHECK, max_examples=30)
@given(blob=st.sampled_from([BLOB, MIXED]), bit=st.integers(0, 8 * len(MIXED) - 1))
def test_a_flipped_bit_anywhere_is_caught(models, blob, bit):
    b = bytearray(blob)
    at = bit // 8 % len(b)
    b[at] ^= 1 << (bit % 8)
    # header CRC, payload CRC or the coder; only the coder's last word may hold bits it never reads
    want = {"clean", "harmless"} if at >= len(blob) - 4 else {"clean"}
    assert outcome(bytes(b), models[blob]) in want


@settings(CHECK, max_examples=150)
@given(cut=st.integers(0, len(BLOB) - 1))
def test_every_truncation_is_one_clean_error(cut):
    with pytest.raises(LmzipError):
        fmt.unpack(BLOB[:cut])


@settings(CHECK, max_examples=80)
@given(field=st.sampled_from(sorted(fmt.FIELDS)), value=st.one_of(
    st.sampled_from([0, 1, 2, 3, 255, 2**16 - 1, 2**24, 10**6, 2**32 - 1, 2**40, 2**63 - 1, 2**64 - 1]),
    st.integers(0, 2**64 - 1)))
def test_a_crafted_header_field_is_refused_or_harmless(models, field, value):
    off, f = fmt.FIELDS[field]
    b = bytearray(BLOB)
    struct.pack_into(f, b, off, value % (1 << (8 * struct.calcsize(f))))
    end = fmt.unpack(BLOB)[0].size - 4
    b[end : end + 4] = struct.pack("<I", zlib.crc32(bytes(b[:end])))
    assert outcome(bytes(b), models[BLOB]) in ("clean", "harmless")
