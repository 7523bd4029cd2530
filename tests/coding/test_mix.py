"""--mix: repeats get cheaper (format 11 mixes counting in; tests/coding/test_hybrid.py), and the token
match model that files of formats 8-10 were mixed with still gives exact, identical rows."""

from __future__ import annotations

import numpy as np

from lmzip.coding import codec, mix
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


def _uniform(rows: int, vocab: int) -> np.ndarray:
    total = (1 << 24) - vocab
    counts = np.full((rows, vocab), total // vocab, dtype=np.float32)
    counts[:, 0] += total - counts[0].sum()
    return counts


def _feed(m, toks: np.ndarray, lengths: np.ndarray, vocab: int = 16) -> np.ndarray:
    """Step a mixer through ``toks`` (already filled in) and return its rows at the last step."""
    rows = np.arange(len(lengths))
    for t in range(toks.shape[1] + 1):
        out = m.mix(t, rows, _uniform(len(rows), vocab))
        if t < toks.shape[1]:
            m.update(t, rows)
    return out  # the rows predicting the step after the last


def test_match_model_predicts_the_continuation_and_keeps_the_counts_exact():
    toks = np.array([[5, 6, 7, 8, 9, 5, 6, 7]])
    rows = _feed(mix.MatchMixer(toks, np.array([8])), toks, np.array([8]))
    assert int(np.argmax(rows[0])) == 8 and rows[0, 8] > rows[0].sum() / 16
    assert rows.dtype == np.float32 and rows[0].astype(np.int64).sum() == (1 << 24) - 16  # still coder-ready
    assert np.all(rows == np.round(rows)) and rows.min() >= 0


def test_a_match_runs_on_into_the_next_segment():
    toks = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 1, 2, 3]])  # row 2 repeats the text across rows 0-1
    out = _feed(mix.MatchMixer(toks, np.array([4, 4, 4])), toks, np.array([4, 4, 4]))
    assert int(np.argmax(out[2])) == 4  # after "1 2 3" came 4


def test_squash_and_stretch_are_inverse_integer_tables():
    assert mix.squash(0) == 2048 and mix.squash(-5000) == 1 and mix.squash(5000) == 4095
    values = [mix.squash(d) for d in range(-2047, 2048)]
    assert values == sorted(values)
    for p in (1, 100, 2048, 4000, 4095):
        assert abs(mix.squash(mix.stretch(p)) - p) <= max(1, p // 64)


def test_the_mixer_learns_to_trust_a_reliable_input():
    m = mix.Mixer(1, (1 << 16, 1 << 15, 0))
    x = (mix.stretch(400), mix.stretch(3500), 256)  # the model says 10%, the match 85%: the match is right
    first = m.predict(0, x)
    for _ in range(200):
        m.learn(0, x, m.predict(0, x), True)
    assert m.predict(0, x) > first + 1000
