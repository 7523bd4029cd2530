"""Committed golden files: every portable format version keeps decoding on any machine, and today's
encoder reproduces the current version's bitstream exactly (format or numeric drift fails here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmzip.coding import codec
from lmzip.coding import format as fmt
from lmzip.coding.settings import LEARNING
from lmzip.models.checkpoint import load_model
from tests.make_golden import (
    ARITHS,
    BLOCKS,
    CASES,
    MIXED_VERSIONS,
    blocks_file,
    golden_model,
    golden_path,
    golden_settings,
    mixed_path,
    mixed_settings,
)

DATA = Path(__file__).parent.parent / "data"
ORIGINAL = (DATA / "golden.txt").read_bytes()
GOLDEN = sorted(DATA.glob("golden-*-v*.lmz"))


def test_there_are_golden_files_of_every_version_and_arithmetic():
    want = {golden_path(a, t, 8, r).name for a in ("gpt", "lstm") for t in CASES for r in ARITHS}
    want |= {golden_path(a, t).name for a in ("gpt", "lstm") for t in [*CASES, BLOCKS]}
    assert {p.name for p in GOLDEN} >= want


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_every_golden_file_decodes(path):
    arch = path.name.split("-")[1]
    import lmzip

    blob = path.read_bytes()
    head = fmt.parse_header(blob)  # the first block's
    original = (DATA / "golden-crlf.txt").read_bytes() if "-crlf-" in path.name else ORIGINAL
    original = ORIGINAL * 2 if "-mix-" in path.name else original
    tag = path.name[len(f"golden-{arch}") : path.name.rindex("-v")]
    mixed = tag in ("-mix", "-scratch")  # formats 8-10: the token match model (lmzip.coding.legacy)
    assert head.crlf == (tag == "-crlf") and (head.mix, head.match) == (mixed and head.version >= 11,
                                                                       mixed and head.version < 11)
    learns = tag in ("-adapt", "-scratch")
    counts = int(path.name.split("-arith")[1][0]) if "-arith" in path.name else 1
    assert head.adapt == learns and head.arith == (LEARNING[counts] if learns else counts)
    assert (head.seed is not None) == (tag == "-scratch")
    assert (tag == BLOCKS) == (not head.last)
    assert lmzip.decompress(blob, model=golden_model(arch, tag), jobs=1) == original


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
@pytest.mark.parametrize("tag", list(CASES))
def test_encoder_reproduces_the_golden_bitstream(arch, tag):
    blob, head, _ = codec.encode(CASES[tag][0](), golden_model(arch, tag), golden_settings(tag))
    assert blob == golden_path(arch, tag).read_bytes()


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
def test_encoder_reproduces_the_golden_blocks(arch):
    assert blocks_file(arch) == golden_path(arch, BLOCKS).read_bytes()


@pytest.mark.parametrize("version", MIXED_VERSIONS)
@pytest.mark.parametrize("arch", ["gpt", "lstm"])
def test_the_mixed_golden_files_of_newer_cm_versions_decode_and_are_reproduced(arch, version):
    """Format 12 with the counting models of cm versions 11 and 26 mixed in ("-mix"'s golden files hold version 9's)."""
    import lmzip

    blob = mixed_path(arch, version).read_bytes()
    head = fmt.parse_header(blob)
    assert head.mix and head.mix_version == version and head.version == fmt.VERSION
    assert lmzip.decompress(blob, model=golden_model(arch, "-mix"), jobs=1) == ORIGINAL * 2
    assert codec.encode(CASES["-mix"][0](), golden_model(arch, "-mix"), mixed_settings(version))[0] == blob


@pytest.mark.parametrize("arith", ARITHS)
@pytest.mark.parametrize("arch", ["gpt", "lstm"])
@pytest.mark.parametrize("tag", list(CASES))
def test_a_one_block_payload_is_format_8s(arch, tag, arith):
    """Formats 9 to 12 changed the container, not the coding: one block's payload is the format-8 file's,
    in arithmetic 3 and in arithmetic 1, whose code is kept to decode those files; but with mix, which
    formats 11 and 12 code anew (counting mixed in, lmzip.coding.mix), and which the v8-v10 files decode as
    they were written (test_every_golden_file_decodes)."""
    blob, head, _ = codec.encode(CASES[tag][0](), golden_model(arch, tag), golden_settings(tag, arith))
    old = fmt.unpack(golden_path(arch, tag, 8, arith).read_bytes())[1]
    assert head.version == fmt.VERSION == 12 and head.mix == (tag in ("-mix", "-scratch"))
    assert (blob[head.size :] == old) != head.mix


def test_golden_model_id_and_layout_are_stable():
    model = load_model(DATA / "golden-gpt")
    head = fmt.unpack(golden_path("gpt", "").read_bytes())[0]
    assert head.model_id == model.model_id
    assert head.segment_length == 128 and head.n_segments == 5 and head.groups == 1
    assert fmt.unpack(golden_path("gpt", "-groups2").read_bytes())[0].groups == 2


@pytest.mark.parametrize("version", range(1, 8))
def test_pre_release_formats_are_refused_with_one_clear_line(version):
    blob = bytearray(golden_path("gpt", "").read_bytes())
    blob[4] = version
    with pytest.raises(fmt.FormatError, match=f"pre-release lmzip, format {version}: decode it with lmzip 0.1.0 "
                                              "on the machine that wrote it"):
        fmt.unpack(bytes(blob))


@pytest.mark.parametrize("arith", [3, 6])
@pytest.mark.parametrize("tag", ["", "-adapt"])
def test_int8_files_decode_without_int8_products(monkeypatch, tag, arith):
    """Where no int8 kernel runs (or on a GPU), float32 and float64 products of the same integers
    decode what int8 GEMMs wrote."""
    from lmzip.arith import exact

    monkeypatch.setattr(exact, "KERNEL", "float32")
    head, payload = fmt.unpack(golden_path("gpt", tag, 11 if arith == 3 else fmt.VERSION, arith=arith).read_bytes())
    assert codec.decode(head, payload, golden_model("gpt", tag)) == ORIGINAL
