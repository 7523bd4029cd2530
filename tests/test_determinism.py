"""The determinism rule (codec.py): the decoder sees bit-identical probability rows to the encoder."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from lmzip import codec
from lmzip import format as fmt
from tests.conftest import TEXT


def record_rows(monkeypatch):
    rows: list[np.ndarray] = []
    real = codec.quantize

    def spy(logits):
        out = real(logits)
        rows.append(out.copy())
        return out

    monkeypatch.setattr(codec, "quantize", spy)
    return rows


def test_encoder_and_decoder_rows_are_bit_identical(byte_model, monkeypatch):
    rows = record_rows(monkeypatch)
    blob, head, _ = codec.encode(TEXT[:300], byte_model, codec.Settings(), segment=40)
    enc_rows = list(rows)
    rows.clear()
    codec.decode(*fmt.unpack(blob), byte_model)
    assert len(enc_rows) == len(rows) == 40
    for a, b in zip(enc_rows, rows, strict=True):
        assert a.dtype == np.float32 and a.tobytes() == b.tobytes()


def test_thread_count_is_recorded_and_restored(gpt_model):
    before = torch.get_num_threads()
    blob, head, _ = codec.encode(TEXT[:200], gpt_model, codec.Settings(threads=2))
    assert head.threads == 2 and fmt.unpack(blob)[0].threads == 2
    assert torch.get_num_threads() == before
    assert codec.decode(*fmt.unpack(blob), gpt_model) == TEXT[:200]


def test_ideal_bits_match_the_coded_size(gpt_model):
    data = TEXT * 3
    blob, head, bits = codec.encode(data, gpt_model, codec.Settings())
    payload = len(blob) - head.size
    # the range coder stays within a fraction of a percent of the cross-entropy (+ its flush words)
    assert bits / 8 <= payload <= bits / 8 * 1.005 + 8 * head.n_segments + 8


def test_bf16_coding_round_trips_in_another_process_and_leaves_the_model_alone(tmp_path):
    from lmzip.checkpoint import load_model
    from tests.test_golden import DATA

    for arch in ("gpt", "lstm"):
        model = load_model(DATA / f"golden-{arch}")
        before = {k: v.clone() for k, v in model.predictor.state_dict().items()}
        bf16 = codec.Settings(dtype="bfloat16")
        blob, head, _ = codec.encode(TEXT, model, bf16, segment=200, groups=2)
        fp32 = codec.encode(TEXT, model, codec.Settings(), segment=200, groups=2)[0]
        assert head.dtype == "bfloat16" and blob != fp32
        assert all(torch.equal(before[k], v) for k, v in model.predictor.state_dict().items())
        (tmp_path / "x.lmz").write_bytes(blob)
        code = ("import sys; from lmzip import codec, format as f; from lmzip.checkpoint import load_model; "
                f"h, p = f.unpack(open({str(tmp_path / 'x.lmz')!r}, 'rb').read()); "
                f"sys.stdout.buffer.write(codec.decode(h, p, load_model({str(DATA / ('golden-' + arch))!r})))")
        assert subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout == TEXT


def test_adaptive_coding_refuses_bf16(gpt_model):
    from lmzip.adapt import AdaptConfig

    with pytest.raises(ValueError, match="float32"):
        codec.encode(TEXT, gpt_model, codec.Settings(dtype="bfloat16", adapt=AdaptConfig()))
