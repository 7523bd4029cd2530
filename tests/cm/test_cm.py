"""lmzip.cm: round trips on every kind of input, a golden digest of the arithmetic, hostile headers,
and the memory a level states."""

from __future__ import annotations

import hashlib
import random
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from lmzip import cm
from lmzip.cm import format as fmt
from lmzip.cm.model import allocate, table_bytes
from lmzip.errors import FormatError, IntegrityError, LmzipError

LEVEL = 1  # the smallest tables: fast to allocate, same code path as every level

TEXT = (b"It was the best of times, it was the worst of times, it was the age of wisdom, "
        b"it was the age of foolishness.\n") * 8 + "Ünïcödé текст 中文字符\n".encode() * 4
CODE = Path(__file__).read_bytes()
BINARY = struct.pack("<200I", *range(0, 200 * 7919, 7919)) + bytes(range(256)) * 2


def _random(n: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(n)


CASES = {
    "empty": b"",
    "one": b"x",
    "all256": bytes(range(256)),
    "random": _random(3000),
    "repetitive": b"ab" * 5000,
    "zeros": bytes(20000),
    "text": TEXT,
    "code": CODE,
    "binary": BINARY,
}


@pytest.mark.parametrize("name", CASES)
def test_round_trip(name):
    data = CASES[name]
    blob = cm.compress(data, LEVEL)
    assert cm.decompress(blob) == data


def test_compresses_what_repeats():
    assert len(cm.compress(b"ab" * 5000, LEVEL)) < 60
    assert len(cm.compress(TEXT, LEVEL)) < len(zlib.compress(TEXT, 9))
    assert len(cm.compress(_random(3000), LEVEL)) < 3000 * 1.05  # random bytes barely expand


def test_levels_round_trip_and_differ():
    blobs = {lv: cm.compress(TEXT, lv) for lv in (1, 2)}
    assert all(cm.decompress(b) == TEXT for b in blobs.values())
    assert blobs[1][5] == 1 and blobs[2][5] == 2  # the level is in the header


# sha256 of cm.compress(GOLDEN_INPUT, 1): changes only when the model's arithmetic changes, on purpose.
GOLDEN_INPUT = TEXT + BINARY + bytes(range(256))
GOLDEN = "de439c5a0b4ae690bd2a28dbd9e73b781d207db38388e1582d62fde3c671b851"


def test_golden_digest():
    assert hashlib.sha256(cm.compress(GOLDEN_INPUT, 1)).hexdigest() == GOLDEN


def test_deterministic_across_calls():
    assert cm.compress(CODE, LEVEL) == cm.compress(CODE, LEVEL)


@pytest.mark.parametrize("blob, msg", [
    (b"", "truncated"),
    (b"LMC", "truncated"),
    (b"PK\x03\x04" + bytes(30), "bad magic"),
    (b"LMCM" + bytes([9, 1]) + bytes(12) + b"x", "version"),
    (b"LMCM" + bytes([1, 0]) + bytes(12) + b"x", "level"),
    (b"LMCM" + bytes([1, 12]) + bytes(12) + b"x", "level"),
    (fmt.pack(1, 1 << 40, 0) + b"abc", "claims"),
    (fmt.pack(1, 10, 0), "no payload"),
])
def test_hostile_headers(blob, msg):
    with pytest.raises(FormatError, match=msg) as e:
        cm.decompress(blob)
    assert "\n" not in str(e.value)


def test_crc_mismatch_and_corruption():
    blob = bytearray(cm.compress(TEXT, LEVEL))
    bad_crc = bytes(blob[:14]) + bytes(4) + bytes(blob[18:])
    with pytest.raises(IntegrityError, match="CRC32"):
        cm.decompress(bad_crc)
    blob[40] ^= 0x10  # a flipped payload bit decodes to garbage, which the CRC catches
    with pytest.raises(LmzipError):
        cm.decompress(bytes(blob))
    with pytest.raises(LmzipError):
        cm.decompress(bytes(blob[:30]))  # truncated payload: padded, decoded, refused by the CRC


def test_bad_level_to_compress():
    with pytest.raises(FormatError, match="level"):
        cm.compress(b"abc", 0)


@pytest.mark.parametrize("level", [1, 2, 3])
def test_memory_is_what_the_level_states(level):
    assert allocate(level).nbytes == table_bytes(level)


def test_memory_grows_with_level_within_bound():
    assert table_bytes(1) < 20 << 20  # level 1: ~16 MiB (APMs and mixers are fixed costs)
    assert table_bytes(9) < 1 << 30  # the largest level stays under 1 GiB
    assert all(table_bytes(lv) < table_bytes(lv + 1) for lv in range(1, 9))


def test_bench_registry_entry():
    from lmzip.bench.compressors import build

    c = build("cm")
    assert c.settings == f"-L{cm.DEFAULT_LEVEL}"
    assert c.decompress(c.compress(b"hello hello hello")) == b"hello hello hello"


def test_a_changed_source_clears_the_compiled_cache(tmp_path):
    from lmzip.cm import jitcache

    for name in jitcache.SOURCES:
        (tmp_path / name).write_bytes((jitcache.HERE / name).read_bytes())
    jitcache.ensure_fresh(tmp_path)  # first time: stamp written
    stale = tmp_path / "__pycache__" / "model._code-1.py311.nbi"
    stale.write_bytes(b"compiled")
    jitcache.ensure_fresh(tmp_path)  # nothing changed: the cache stays
    assert stale.exists()
    (tmp_path / "parts.py").write_text((tmp_path / "parts.py").read_text() + "\n# edited\n")
    jitcache.ensure_fresh(tmp_path)  # a sibling of model.py changed: numba alone would not notice
    assert not stale.exists()
    assert (tmp_path / "__pycache__" / "cm-sources.sha256").read_text() == jitcache.sources_digest(tmp_path)


def test_the_cost_profile_leaves_the_stream_as_it_is():
    """compress(marks=) records the payload's length after every K-th of the input (the mixed coder's
    budget reads it) and writes the very same stream."""
    data = (b"the cost of every part of the input, " * 40 + bytes(range(256)) * 4)[:2000]
    marks = np.zeros(64, dtype=np.int64)
    blob = cm.compress(data, 6, marks)
    assert blob == cm.compress(data, 6)
    assert np.all(np.diff(marks) >= 0) and 0 < marks[0] and marks[-1] <= len(blob) - fmt.HEADER_BYTES
    assert marks[31] < marks[-1] // 2  # the repeated text costs less than the bytes after it
