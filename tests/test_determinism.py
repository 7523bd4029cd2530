"""The determinism rule (codec.py): the decoder sees bit-identical probability rows to the encoder."""

from __future__ import annotations

import numpy as np
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
