"""Committed golden files: every portable format version keeps decoding on any machine, and today's
encoder reproduces the current version's bitstream exactly (format or numeric drift fails here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmzip.coding import codec
from lmzip.coding import format as fmt
from lmzip.models.checkpoint import load_model
from tests.make_golden import CASES, golden_model, golden_path

DATA = Path(__file__).parent.parent / "data"
ORIGINAL = (DATA / "golden.txt").read_bytes()
GOLDEN = sorted(DATA.glob("golden-*-v*.lmz"))


def test_there_are_golden_files_of_the_current_version():
    assert {p.name for p in GOLDEN} >= {golden_path(a, t).name for a in ("gpt", "lstm") for t in CASES}


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_every_golden_file_decodes(path):
    arch = path.name.split("-")[1]
    head, payload = fmt.unpack(path.read_bytes())
    original = (DATA / "golden-crlf.txt").read_bytes() if "-crlf-" in path.name else ORIGINAL
    original = ORIGINAL * 2 if "-mix-" in path.name else original
    tag = path.name[len(f"golden-{arch}") : path.name.rindex("-v")]
    assert head.crlf == (tag == "-crlf") and head.mix == (tag in ("-mix", "-scratch"))
    learns = tag in ("-adapt", "-scratch")
    assert head.adapt == learns and head.arith == (2 if learns else 1)
    assert (head.seed is not None) == (tag == "-scratch")
    assert codec.decode(head, payload, golden_model(arch, tag)) == original


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
@pytest.mark.parametrize("tag", list(CASES))
def test_encoder_reproduces_the_golden_bitstream(arch, tag):
    data, settings = CASES[tag]
    blob, head, _ = codec.encode(data(), golden_model(arch, tag), settings)
    assert blob == golden_path(arch, tag).read_bytes()


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
