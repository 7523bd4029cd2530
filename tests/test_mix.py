"""Mixing with the online match model: exact round trips, identical rows, and repeats get cheaper."""

from __future__ import annotations

import numpy as np

from lmzip import codec
from lmzip import format as fmt
from lmzip.mix import MatchMixer
from tests.conftest import TEXT

MIX = codec.Settings(mix=True)


def test_mix_round_trips(byte_model, bpe_model):
    for model in (byte_model, bpe_model):
        for data in (TEXT, TEXT[:50], bytes(range(256)) * 3):
            blob, head, _ = codec.encode(data, model, MIX, segment=200)
            assert head.mix or head.stored
            assert codec.decode(*fmt.unpack(blob), model) == data


def test_mix_makes_repeats_cheaper(gpt_model):
    rng = np.random.default_rng(0)
    block = bytes(rng.integers(97, 123, 400, dtype=np.uint8))  # unpredictable for the model...
    data = block * 4  # ...until it repeats
    plain = codec.encode(data, gpt_model, codec.Settings(), segment=len(data))[0]
    mixed = codec.encode(data, gpt_model, MIX, segment=len(data))[0]
    assert len(mixed) < 0.5 * len(plain)


def test_match_model_predicts_the_continuation():
    m = MatchMixer(1)
    seq = [5, 6, 7, 8, 9, 5, 6, 7]
    for tok in seq:
        m.mix(np.array([0]), np.full((1, 16), 1 / 16, dtype=np.float32))
        m.update(np.array([0]), np.array([tok]))
    rows = m.mix(np.array([0]), np.full((1, 16), 1 / 16, dtype=np.float32))
    assert int(np.argmax(rows[0])) == 8 and rows[0, 8] > 1 / 16
