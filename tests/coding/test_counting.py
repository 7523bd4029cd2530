"""Counting frames (format 10, short frames 13 and 14): lmzip.cm in .lmz, no model; header checks; golden files."""

from __future__ import annotations

import hashlib
import io
import os
import struct
import zlib
from pathlib import Path

import pytest

import lmzip
from lmzip.api import LMCompressor, counting_level
from lmzip.arith import versions
from lmzip.coding import format as fmt
from lmzip.coding import stream
from lmzip.coding.settings import Settings
from lmzip.errors import FormatError, LmzipError
from tests.conftest import TEXT

GOLDEN = Path(__file__).parent.parent / "data" / "counted-v13.lmz"  # TEXT[:600] * 4 at cm level 1: a short frame
BLOCKS = GOLDEN.with_name("counted-blocks-v11-cm2.lmz")  # the same in ordinary counting frames of 1 KiB blocks
BLOCKS_12 = GOLDEN.with_name("counted-blocks-v12-cm2.lmz")  # the same in format 12 (its frames' version byte)
GOLDEN_V12 = GOLDEN.with_name("counted-v12.lmz")  # the same in cm version 1 (lmzip 0.7)
GOLDEN_V14 = GOLDEN.with_name("counted-v14.lmz")  # the same at cm level 7: cm version 3, its version recorded
GOLDEN_CM4 = GOLDEN.with_name("counted-v14-cm4.lmz")  # the same at cm level 7 in cm version 4
GOLDEN_CM5 = GOLDEN.with_name("counted-v14-cm5.lmz")  # the same at cm level 7 in cm version 5
GOLDEN_CM6 = GOLDEN.with_name("counted-v14-cm6.lmz")  # the same at cm level 7 in cm version 6
GOLDEN_CM7 = GOLDEN.with_name("counted-v14-cm7.lmz")  # the same at cm level 7 in cm version 7
GOLDEN_CM8 = GOLDEN.with_name("counted-v14-cm8.lmz")  # the same at cm level 7 in cm version 8
GOLDEN_CM9 = GOLDEN.with_name("counted-v14-cm9.lmz")  # the same at cm level 7 in cm version 9 (lmzip 0.8)
GOLDEN_CM10 = GOLDEN.with_name("counted-v14-cm10.lmz")  # the same at cm level 7 in cm version 10
GOLDEN_CM11 = GOLDEN.with_name("counted-v14-cm11.lmz")  # the same at cm level 7 in cm version 11
GOLDEN_CM12 = GOLDEN.with_name("counted-v14-cm12.lmz")  # the same at cm level 7 in cm version 12
GOLDEN_CM13 = GOLDEN.with_name("counted-v14-cm13.lmz")  # the same at cm level 7 in cm version 13
GOLDEN_CM14 = GOLDEN.with_name("counted-v14-cm14.lmz")  # the same at cm level 7 in cm version 14
GOLDEN_CM15 = GOLDEN.with_name("counted-v14-cm15.lmz")  # the same at cm level 7 in cm version 15 (by length)
GOLDEN_CM16 = GOLDEN.with_name("counted-v14-cm16.lmz")  # the same at cm level 7 in cm version 16 (the misses)
GOLDEN_CM17 = GOLDEN.with_name("counted-v14-cm17.lmz")  # the same at cm level 7 in cm version 17 (the text's shape)
GOLDEN_CM18 = GOLDEN.with_name("counted-v14-cm18.lmz")  # the same at cm level 7 in cm version 18 (orders 6 and 12)
GOLDEN_CM19 = GOLDEN.with_name("counted-v14-cm19.lmz")  # the same at cm level 7 in cm version 19 (the clauses)
GOLDEN_CM20 = GOLDEN.with_name("counted-v14-cm20.lmz")  # the same at cm level 7 in cm version 20 (the letters)
GOLDEN_CM21 = GOLDEN.with_name("counted-v14-cm21.lmz")  # the same at cm level 7 in cm version 21 (its filter byte: 0)
GOLDEN_CM22 = GOLDEN.with_name("counted-v14-cm22.lmz")  # the same at cm level 7 in cm version 22 (the calibration)
GOLDEN_CM23 = GOLDEN.with_name("counted-v14-cm23.lmz")  # the same at cm level 7 in cm version 23 (a leaner table)
GOLDEN_CM24 = GOLDEN.with_name("counted-v14-cm24.lmz")  # the same at cm level 7 in cm version 24 (character groups)
GOLDEN_CM25 = GOLDEN.with_name("counted-v14-cm25.lmz")  # the same at cm level 7 in cm version 25 (fields, phrases)
GOLDEN_CM26 = GOLDEN.with_name("counted-v14-cm26.lmz")  # the same at cm level 7 in cm version 26 (nine models fewer)
GOLDEN_CM27 = GOLDEN.with_name("counted-v14-cm27.lmz")  # the same at cm level 7 in cm version 27 (settled weight sets)
GOLDEN_CM29 = GOLDEN.with_name("counted-v14-cm29.lmz")  # the same at cm level 7 in cm version 29 (the text primer)
CM_GOLDEN = (  # newest first
    GOLDEN_CM29, GOLDEN_CM27, GOLDEN_CM26, GOLDEN_CM25, GOLDEN_CM24, GOLDEN_CM23, GOLDEN_CM22, GOLDEN_CM21, GOLDEN_CM20,
    GOLDEN_CM19, GOLDEN_CM18, GOLDEN_CM17, GOLDEN_CM16, GOLDEN_CM15, GOLDEN_CM14, GOLDEN_CM13, GOLDEN_CM12,
    GOLDEN_CM11, GOLDEN_CM10, GOLDEN_CM9, GOLDEN_CM8, GOLDEN_CM7, GOLDEN_CM6, GOLDEN_CM5, GOLDEN_CM4)
GOLDEN_V10 = GOLDEN.with_name("counted-v10.lmz")  # the same, written before short frames had a payload length
FRAME = GOLDEN.with_name("counted-frame-v10.lmz")  # cm version 1 as an ordinary counting frame (as in files of blocks)


def counted(data: bytes, level: str = "cm-1", **kw) -> bytes:
    return LMCompressor(level, jobs=1, **kw).compress(data)


@pytest.mark.parametrize("data, coded", [(TEXT * 3, True), (bytes(range(256)) * 8, True), (b"", False),
                                         (b"x", False), (os.urandom(3000), False), (b"ab" * 5000, True)],
                         ids=["text", "binary", "empty", "one", "random", "repeats"])
def test_counting_round_trips_without_a_model(data, coded):
    blob = counted(data)
    assert lmzip.decompress(blob, jobs=1) == data
    head = fmt.parse_header(blob)
    assert head.counting == coded and head.stored == (not coded)  # what counting cannot shrink is stored
    if coded:
        assert (head.version, head.arith, head.model_id, head.n_tokens, head.model_name) == (
            13, versions.COUNTING, bytes(16), 0, "cm-1")  # cm version 2: the frame lmzip 0.7 reads
        assert head.short and len(blob) < len(data) // 4


def test_counting_codes_text_smaller_than_xz_and_every_block_alone():
    import lzma

    prose = (Path(__file__).parents[2] / "corpora" / "canterbury" / "alice29.txt").read_bytes()[:30000]
    assert len(counted(prose)) < 0.85 * len(lzma.compress(prose, preset=9 | lzma.PRESET_EXTREME))
    data = TEXT * 3
    out = io.BytesIO()
    stream.compress_stream(io.BytesIO(data), out, None, Settings.make(counting=1, block_size=1024))
    heads = [h for h, _ in fmt.read_frames(io.BytesIO(out.getvalue()))]
    assert len(heads) == -(-len(data) // 1024) and all(h.counting for h in heads)
    assert lmzip.decompress(out.getvalue(), jobs=1) == data


def test_the_counting_golden_files_decode_and_are_reproduced():
    data = TEXT[:600] * 4
    for f in (GOLDEN, *CM_GOLDEN, GOLDEN_V14, BLOCKS, BLOCKS_12, GOLDEN_V12, GOLDEN_V10, FRAME):
        assert lmzip.decompress(f.read_bytes(), jobs=1) == data, f.name
    assert counted(data) == GOLDEN.read_bytes()  # format or counting drift fails here
    assert counted(data, "cm-7") == GOLDEN_CM27.read_bytes()
    out = io.BytesIO()
    stream.compress_stream(io.BytesIO(data), out, None, Settings.make(counting=1, block_size=1024))
    assert out.getvalue() == BLOCKS_12.read_bytes()
    old = [(h.original_length, p) for h, p in fmt.read_frames(io.BytesIO(BLOCKS.read_bytes()))]
    assert [(h.original_length, p) for h, p in fmt.read_frames(io.BytesIO(out.getvalue()))] == old  # the same payloads
    assert hashlib.sha256(GOLDEN.read_bytes()).hexdigest()[:16] == "6fb6e1666a472a73"
    assert hashlib.sha256(GOLDEN_V12.read_bytes()).hexdigest()[:16] == "0cea8b944f6348db"
    v12, v10, frame = GOLDEN_V12.read_bytes(), GOLDEN_V10.read_bytes(), FRAME.read_bytes()  # cm 1's coder bytes
    assert v12[fmt.parse_header(v12).size :] == frame[fmt.parse_header(frame).size + 18 :]
    assert v12[fmt.parse_header(v12).size :] == v10[fmt.parse_header(v10).size :]
    heads = [fmt.parse_header(f.read_bytes()) for f in (*CM_GOLDEN, GOLDEN_V14, GOLDEN, GOLDEN_V12, GOLDEN_V10)]
    expected = [(14, 29)] + [(14, v) for v in range(27, 2, -1)] + [(13, 2), (12, 1), (10, 1)]  # (frame, cm version)
    assert [(h.version, h.counted_by) for h in heads] == expected
    assert hashlib.sha256(GOLDEN_V14.read_bytes()).hexdigest()[:16] == "41f178d331039ea7"
    assert hashlib.sha256(GOLDEN_CM4.read_bytes()).hexdigest()[:16] == "d395525ea9bce626"
    assert hashlib.sha256(GOLDEN_CM5.read_bytes()).hexdigest()[:16] == "c98e4b5a464f6b71"
    assert hashlib.sha256(GOLDEN_CM6.read_bytes()).hexdigest()[:16] == "03dfafb977d821e8"
    assert hashlib.sha256(GOLDEN_CM7.read_bytes()).hexdigest()[:16] == "9bb26c7d35c74161"
    assert hashlib.sha256(GOLDEN_CM8.read_bytes()).hexdigest()[:16] == "3075259042abeb34"
    assert hashlib.sha256(GOLDEN_CM9.read_bytes()).hexdigest()[:16] == "a9ff7a6fc7c46dcc"
    assert hashlib.sha256(GOLDEN_CM10.read_bytes()).hexdigest()[:16] == "4b999f8bc2b5898c"
    assert hashlib.sha256(GOLDEN_CM11.read_bytes()).hexdigest()[:16] == "b89e2778d1920359"
    assert hashlib.sha256(GOLDEN_CM12.read_bytes()).hexdigest()[:16] == "3bd3a30a71c7425b"
    assert hashlib.sha256(GOLDEN_CM13.read_bytes()).hexdigest()[:16] == "0a110bb2f89ebd56"
    assert hashlib.sha256(GOLDEN_CM14.read_bytes()).hexdigest()[:16] == "44ca9a38313d0952"
    assert hashlib.sha256(GOLDEN_CM15.read_bytes()).hexdigest()[:16] == "0d370a4277ffec8b"
    assert hashlib.sha256(GOLDEN_CM16.read_bytes()).hexdigest()[:16] == "dde549bc45f8b69b"
    assert hashlib.sha256(GOLDEN_CM17.read_bytes()).hexdigest()[:16] == "d122a0b172194528"
    assert hashlib.sha256(GOLDEN_CM18.read_bytes()).hexdigest()[:16] == "8d01ce72b488ad61"
    assert hashlib.sha256(GOLDEN_CM19.read_bytes()).hexdigest()[:16] == "bfe0d728756815d9"
    assert hashlib.sha256(GOLDEN_CM20.read_bytes()).hexdigest()[:16] == "e117aa0f274c8d44"
    assert hashlib.sha256(GOLDEN_CM21.read_bytes()).hexdigest()[:16] == "30e47d54c7b464e3"
    assert hashlib.sha256(GOLDEN_CM22.read_bytes()).hexdigest()[:16] == "9c8a6f83b0ab9477"
    assert hashlib.sha256(GOLDEN_CM23.read_bytes()).hexdigest()[:16] == "5394466fc32894c6"
    assert hashlib.sha256(GOLDEN_CM24.read_bytes()).hexdigest()[:16] == "bf7fbd2e438b78e8"
    assert hashlib.sha256(GOLDEN_CM25.read_bytes()).hexdigest()[:16] == "2a6d490993f0151c"
    assert hashlib.sha256(GOLDEN_CM26.read_bytes()).hexdigest()[:16] == "41dd2f20d8714dae"
    assert hashlib.sha256(GOLDEN_CM27.read_bytes()).hexdigest()[:16] == "fa7c1c7ff80a7b5c"
    assert hashlib.sha256(GOLDEN_CM29.read_bytes()).hexdigest()[:16] == "9c1a939afa5c4cb7"
    assert all(p[1][4] == 2 for p in fmt.read_frames(io.BytesIO(BLOCKS.read_bytes())))  # each frame's cm stream


@pytest.mark.parametrize("cm_version, message", [(2, "corrupt header [(]cm version 2 in a version-14 frame"),
                                                 (30, "cm stream version 30 is not supported")])
def test_a_short_frame_of_an_unknown_cm_version_is_refused_in_one_line(cm_version, message):
    blob = GOLDEN_V14.read_bytes()
    at = fmt.parse_header(blob).size - 4 - 2  # the cm version: after the level, before the payload length
    assert blob[at] == 3
    with pytest.raises(FormatError, match=message) as e:
        lmzip.decompress(_recrc(blob, at, bytes([cm_version])), jobs=1)
    assert "\n" not in str(e.value)


def test_model_names_that_ask_for_counting():
    assert [counting_level(m) for m in ("cm", "cm-1", "cm-9", "cm-0", "cm-10", "gpt-wide", None)] == [
        6, 1, 9, None, None, None, None]
    with pytest.raises(ValueError, match="--mix and --adapt need one"):
        LMCompressor("cm", mix=True)


def _recrc(blob: bytes, at: int, value: bytes) -> bytes:
    """The blob with header bytes at ``at`` replaced and the header's CRC32 recomputed."""
    head = fmt.parse_header(blob)
    b = bytearray(blob)
    b[at : at + len(value)] = value
    end = head.size - 4
    b[end : end + 4] = struct.pack("<I", zlib.crc32(bytes(b[:end])))
    return bytes(b)


@pytest.mark.parametrize("field, value, message", [
    (5, bytes([fmt.FLAG_COUNT | fmt.FLAG_LAST | fmt.FLAG_MIX]), "a counting frame with a model's flags"),
    (6, bytes([3]), "a counting frame with a model's flags or arithmetic"),
    (33, b"\x01", "a counting frame with tokens or a model"),
    (4, bytes([9]), "unsupported header flags"),  # format 9 had no counting frames
])
def test_a_crafted_counting_header_is_refused_in_one_line(field, value, message):
    blob = _recrc(FRAME.read_bytes(), field, value)
    with pytest.raises(FormatError, match=message):
        lmzip.decompress(blob, jobs=1)


def test_a_counting_stream_that_would_not_fit_in_memory_is_refused(monkeypatch):
    from lmzip.coding import parallel

    monkeypatch.setattr(parallel, "available_memory", lambda: 1 << 20)
    with pytest.raises(LmzipError, match=r"needs 18 MiB of memory to decode, 1 MiB available"):
        lmzip.decompress(GOLDEN.read_bytes(), jobs=1)
    with pytest.raises(LmzipError, match=r"needs 16 MiB of memory to decode, 1 MiB available"):  # cm version 1's
        lmzip.decompress(GOLDEN_V12.read_bytes(), jobs=1)


def test_level_1_is_counting_through_the_command_line(tmp_path):
    from click.testing import CliRunner

    from lmzip.cli import main

    (tmp_path / "a.txt").write_bytes(TEXT * 2)
    r = CliRunner().invoke(main, ["-1", "-q", "-c", str(tmp_path / "a.txt")])
    assert r.exit_code == 0, r.output
    assert fmt.parse_header(r.stdout_bytes).counting
    back = CliRunner().invoke(main, ["-d", "-c"], input=r.stdout_bytes)
    assert back.exit_code == 0 and back.stdout_bytes == TEXT * 2
    r = CliRunner().invoke(main, ["-1", "--mix", "-c", str(tmp_path / "a.txt")])
    assert r.exit_code == 1 and "--mix and --adapt need one" in r.output


def test_counting_runs_without_torch(tmp_path):
    """`lmzip -1` and its decompression start at once: no torch, no codec, no model."""
    import subprocess
    import sys

    (tmp_path / "a.txt").write_bytes(TEXT * 2)
    code = ("import sys; from lmzip.cli import main; sys.argv = ['lmzip', '-1', '-q', '-k', 'a.txt']\n"
            "try: main()\nexcept SystemExit: pass\n"
            "sys.argv = ['lmzip', '-t', 'a.txt.lmz']\ntry: main()\nexcept SystemExit as e: assert not e.code, e\n"
            "assert 'torch' not in sys.modules and 'lmzip.coding.codec' not in sys.modules, 'torch was imported'")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert r.returncode == 0, r.stderr[-1500:]
    assert fmt.parse_header((tmp_path / "a.txt.lmz").read_bytes()).counting


def test_a_small_input_is_mostly_payload():
    """A short frame: 15 bytes of header for a small stored input, 16-18 for a counted one (PPMd: ~10)."""
    assert len(counted(b"")) == 15 and len(counted(b"x")) == 16 and fmt.parse_header(counted(b"x")).stored
    blob = counted(b"a" * 100_000)
    assert len(blob) < 64 and lmzip.decompress(blob, jobs=1) == b"a" * 100_000


@pytest.mark.parametrize("cut, message", [
    (lambda b: b[:5], "truncated header"),
    (lambda b: b[:12], "truncated header"),
    (lambda b: b[:5] + b"\x03" + b[6:], "unsupported short frame kind"),
    (lambda b: b[:4] + b"\x09" + b[5:], "unsupported format version 9 of a short frame"),
    (lambda b: b[:8] + bytes([b[8] ^ 1]) + b[9:], "header checksum mismatch"),
    (lambda b: b[:-3], "truncated file"),  # a counting payload cut short
    (lambda b: b + b"\0" * 5000, "trailing garbage after the payload"),
])
def test_a_damaged_short_frame_is_one_clean_error(cut, message):
    with pytest.raises(LmzipError, match=message):
        lmzip.decompress(cut(GOLDEN.read_bytes()), jobs=1)


def test_a_stored_short_frame_holds_exactly_the_input():
    blob = counted(os.urandom(100))
    assert fmt.parse_header(blob).stored and lmzip.decompress(blob, jobs=1) == blob[15:]
    with pytest.raises(FormatError, match="truncated file"):
        lmzip.decompress(blob[:-1], jobs=1)
    with pytest.raises(FormatError, match="trailing garbage"):
        lmzip.decompress(blob + b"x", jobs=1)


def test_a_level_beside_counting_brings_no_modes_and_rm_refuses_stdout(tmp_path):
    from click.testing import CliRunner

    from lmzip.cli import main

    (tmp_path / "a.txt").write_bytes(TEXT * 2)
    r = CliRunner().invoke(main, ["-3", "-m", "cm", "-q", "-c", str(tmp_path / "a.txt")])
    assert r.exit_code == 0, r.output  # -3's --mix belongs to its network, not to counting
    assert fmt.parse_header(r.stdout_bytes).counting
    r = CliRunner().invoke(main, ["compress", "-c", "--rm", str(tmp_path / "a.txt")])
    assert r.exit_code == 1 and "--rm and -c cannot be used together" in r.output
    assert (tmp_path / "a.txt").exists()
