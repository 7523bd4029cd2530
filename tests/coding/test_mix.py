"""--mix: repeats get cheaper (format 11 mixes counting in; tests/coding/test_hybrid.py)."""

from __future__ import annotations

import numpy as np

from lmzip.coding import codec
from lmzip.coding import format as fmt
from lmzip.coding.settings import Settings
from tests.conftest import TEXT

MIX = Settings(mix=True)


def test_mix_round_trips(byte_model, bpe_model):
    for model in (byte_model, bpe_model):
        for data in (TEXT, TEXT[:50], bytes(range(256)) * 3):
            blob, head, _ = codec.encode(data, model, Settings(mix=True, segment=200))
            assert head.mix or head.stored
            assert codec.decode(*fmt.unpack(blob), model) == data


def test_mix_makes_repeats_cheaper(gpt_model):
    rng = np.random.default_rng(0)
    block = bytes(rng.integers(97, 123, 400, dtype=np.uint8))  # unpredictable for the model...
    data = block * 4  # ...until it repeats
    plain = codec.encode(data, gpt_model, Settings(segment=len(data)))[0]
    mixed = codec.encode(data, gpt_model, Settings(mix=True, segment=len(data)))[0]
    assert len(mixed) < 0.5 * len(plain)


def test_repeats_in_other_segments_are_found(gpt_model):
    """Segments are coded side by side: a repeat of what another segment already coded is cheap too."""
    rng = np.random.default_rng(1)
    block = bytes(rng.integers(97, 123, 300, dtype=np.uint8))
    data = block + bytes(rng.integers(97, 123, 100, dtype=np.uint8)) + block  # a repeat, 400 bytes apart
    bits = {}
    for name, mixing in (("plain", False), ("mix", True)):
        bits[name] = codec.encode(data, gpt_model, Settings(mix=mixing, segment=350))[2]  # two segments side by side
    assert bits["mix"] < 0.65 * bits["plain"]  # the second block costs almost nothing (measured: 0.59)
