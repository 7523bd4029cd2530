"""Committed golden files: every format version ever written keeps decoding, and today's encoder
reproduces the current version's bitstream exactly (format or numeric drift fails here)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from lmzip import codec, registry
from lmzip import format as fmt
from lmzip.adapt import AdaptConfig
from lmzip.checkpoint import load_model
from tests.make_golden import MIX_SEGMENT

DATA = Path(__file__).parent / "data"
ORIGINAL = (DATA / "golden.txt").read_bytes()
NATIVE_BF16 = torch.cpu._is_avx512_bf16_supported()  # the kernels the bf16 golden files were written with
NEEDS_BF16 = pytest.mark.skipif(not NATIVE_BF16, reason="bf16 golden files were written with avx512_bf16 kernels")
GOLDEN = [pytest.param(p, id=p.name, marks=[NEEDS_BF16] if "-bf16-" in p.name else [])
          for p in sorted(DATA.glob("golden-*-v*.lmz"))]


@pytest.mark.parametrize("path", GOLDEN)
def test_every_golden_file_decodes(path):
    arch = path.name.split("-")[1]
    blob = path.read_bytes()
    head, payload = fmt.unpack(blob)
    original = (DATA / "golden-crlf.txt").read_bytes() if "-crlf-" in path.name else ORIGINAL
    original = ORIGINAL * 2 if any(t in path.name for t in ("-mix-", "-adapt-", "-seed-")) else original
    assert head.crlf == ("-crlf-" in path.name) and head.mix == ("-mix-" in path.name)
    assert head.adapt == ("-adapt-" in path.name or "-seed-" in path.name)
    assert (head.seed is not None) == ("-seed-" in path.name)
    assert head.dtype == ("bfloat16" if "-bf16-" in path.name else "float32")
    seeded = head.seed is not None
    model = registry.scratch(head.model_name, head.seed) if seeded else load_model(DATA / f"golden-{arch}")
    assert codec.decode(head, payload, model) == original


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
@pytest.mark.parametrize("groups", [1, 2])
def test_encoder_reproduces_the_golden_bitstream(arch, groups):
    model = load_model(DATA / f"golden-{arch}")
    blob, _, _ = codec.encode(ORIGINAL, model, codec.Settings(), segment=128, groups=groups)
    tag = "-groups2" if groups == 2 else ""
    assert blob == (DATA / f"golden-{arch}{tag}-v{fmt.VERSION}.lmz").read_bytes()


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
def test_encoder_reproduces_the_crlf_golden_bitstream(arch):
    model = load_model(DATA / f"golden-{arch}")
    blob, head, _ = codec.encode((DATA / "golden-crlf.txt").read_bytes(), model, codec.Settings(), segment=128)
    assert head.crlf and blob == (DATA / f"golden-{arch}-crlf-v{fmt.VERSION}.lmz").read_bytes()


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
def test_encoder_reproduces_the_mix_golden_bitstream(arch):
    model = load_model(DATA / f"golden-{arch}")
    blob, head, _ = codec.encode(ORIGINAL * 2, model, codec.Settings(mix=True), segment=MIX_SEGMENT)
    assert head.mix and blob == (DATA / f"golden-{arch}-mix-v{fmt.VERSION}.lmz").read_bytes()


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
def test_encoder_reproduces_the_adapt_golden_bitstream(arch):
    model = load_model(DATA / f"golden-{arch}")
    settings = codec.Settings(adapt=AdaptConfig(1e-3, 16))
    blob, head, _ = codec.encode(ORIGINAL * 2, model, settings, segment=300)
    assert head.adapt and head.adapt_block == 16 and head.adapt_lr == pytest.approx(1e-3)
    assert blob == (DATA / f"golden-{arch}-adapt-v{fmt.VERSION}.lmz").read_bytes()


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
def test_encoder_reproduces_the_learn_from_scratch_golden_bitstream(arch):
    """Seeded random weights must stay the same forever: old files rebuild their model from the seed."""
    model = registry.scratch(f"{arch}-nano", 7)
    blob, head, _ = codec.encode(ORIGINAL * 2, model, codec.Settings(adapt=AdaptConfig(1e-3, 16)), segment=300)
    assert head.seed == 7 and head.model_name == f"{arch}-nano"
    assert blob == (DATA / f"golden-{arch}-seed-v{fmt.VERSION}.lmz").read_bytes()


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
@NEEDS_BF16
def test_encoder_reproduces_the_bf16_golden_bitstream(arch):
    model = load_model(DATA / f"golden-{arch}")
    blob, head, _ = codec.encode(ORIGINAL, model, codec.Settings(dtype="bfloat16"), segment=128)
    assert head.dtype == "bfloat16"
    assert blob == (DATA / f"golden-{arch}-bf16-v{fmt.VERSION}.lmz").read_bytes()


def test_version_1_files_are_still_read():
    head = fmt.unpack((DATA / "golden-gpt-v1.lmz").read_bytes())[0]
    assert head.version == 1 and head.groups == 1


def test_golden_model_id_is_stable():
    model = load_model(DATA / "golden-gpt")
    head = fmt.unpack((DATA / f"golden-gpt-v{fmt.VERSION}.lmz").read_bytes())[0]
    assert head.model_id == model.model_id
    assert head.segment_length == 128 and head.n_segments == 5 and head.threads == 1
