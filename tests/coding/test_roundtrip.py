"""The first test: bytes -> .lmz -> the same bytes, for every kind of input and layout."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from lmzip.coding import codec
from lmzip.coding import format as fmt
from tests.conftest import TEXT

SETTINGS = codec.Settings()


def roundtrip(data: bytes, model, segment=None, coded: bool | None = None) -> fmt.Header:
    blob, head, _ = codec.encode(data, model, replace(SETTINGS, segment=segment))
    h, payload = fmt.unpack(blob)
    if coded is not None:
        assert h.stored is not coded
    assert h == head
    assert codec.decode(h, payload, model) == data
    return h


INPUTS = {
    "empty": b"",
    "one byte": b"a",
    "all 256 byte values": bytes(range(256)),
    "utf-8 scripts": "English, Ελληνικά, Русский, 中文, 日本語, العربية, हिन्दी, 🎉🚀".encode() * 3,
    "repetitive text": TEXT,
}


@pytest.mark.parametrize("name", list(INPUTS))
def test_roundtrip_inputs(byte_model, name):
    roundtrip(INPUTS[name], byte_model, coded=True if name == "repetitive text" else None)


def test_roundtrip_bpe(bpe_model):
    for data in INPUTS.values():
        roundtrip(data, bpe_model)
    roundtrip(bytes(range(256)) * 4, bpe_model, segment=7)


def test_random_bytes_are_stored_and_grow_only_by_the_header(byte_model):
    data = os.urandom(3000)
    blob, head, _ = codec.encode(data, byte_model, SETTINGS)
    assert head.stored
    assert len(blob) == len(data) + head.size
    assert codec.decode(*fmt.unpack(blob), None) == data


@pytest.mark.parametrize("length", [7, 8, 9, 15, 16, 17, 24, 25])
def test_lengths_around_segment_boundaries(gpt_model, length):
    h = roundtrip(TEXT[:length] * 4, gpt_model, segment=8 * 4, coded=True)
    assert h.n_segments == -(-length // 8)


@pytest.mark.parametrize("segment", [1, 2, 3, 50, 333, 10_000])
def test_segment_counts(gpt_model, segment):
    h = roundtrip(TEXT[:700], gpt_model, segment=segment, coded=True)
    assert h.n_segments == -(-700 // segment)


def test_longer_than_the_context(byte_model):
    # context is 16 tokens: 600 tokens in one segment re-prime the window many times
    assert byte_model.predictor.config.context == 16
    h = roundtrip(TEXT[:600], byte_model, segment=600, coded=True)
    assert h.n_segments == 1


def test_segment_length_policy():
    from lmzip.coding import settings as st

    assert st.segment_length(10) == 10
    assert st.segment_length(5000) == st.MIN_SEGMENT
    big = st.MIN_SEGMENT * st.MAX_BATCH * 3
    assert -(-big // st.segment_length(big)) <= st.MAX_BATCH


def test_the_layout_follows_the_input_never_the_machine(monkeypatch):
    """Same input, same file: the groups come from the input size, not the core count."""
    from lmzip.coding import parallel
    from lmzip.coding import settings as st

    small, big = st.PARALLEL_FROM - 1, 200_000
    assert st.Settings().layout(small)[1] == 1
    seg, groups = st.Settings().layout(big)
    assert groups == min(st.MAX_GROUPS, -(-big // seg) // st.ROWS_PER_GROUP) > 1
    for cores in (1, 2, 16):
        monkeypatch.setattr(parallel, "default_workers", lambda c=cores: c)
        assert st.Settings().layout(big) == (seg, groups)


@pytest.mark.parametrize("groups", [2, 3, 7])
def test_groups_round_trip_in_process(gpt_model, groups):
    blob, head, _ = codec.encode(TEXT * 2, gpt_model, replace(SETTINGS, segment=100, groups=groups))
    assert head.groups == groups and not head.stored
    assert codec.decode(*fmt.unpack(blob), gpt_model) == TEXT * 2


def test_groups_side_by_side_match_one_after_another(model_dir):
    from lmzip.models.checkpoint import load_model

    model = load_model(model_dir)
    settings = replace(SETTINGS, segment=100, groups=2)
    blob, head, _ = codec.encode(TEXT * 2, model, settings, workers=2)
    assert codec.encode(TEXT * 2, model, settings, workers=1)[0] == blob
    assert codec.decode(*fmt.unpack(blob), model, workers=2) == TEXT * 2


def test_more_groups_than_workers(model_dir):
    from lmzip.models.checkpoint import load_model

    model = load_model(model_dir)
    settings = codec.Settings(segment=100, groups=3)
    blob, head, _ = codec.encode(TEXT * 2, model, settings, workers=2)  # two at once, then the third
    assert head.groups == 3
    assert codec.encode(TEXT * 2, model, settings, workers=1)[0] == blob
    assert codec.decode(*fmt.unpack(blob), model, workers=3) == TEXT * 2
