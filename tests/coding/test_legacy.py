"""Formats 8-10 (lmzip.coding.legacy): their headers read by their layouts, and the token match model
their mix flag stands for still gives exact, identical rows."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

from lmzip.coding import format as fmt
from lmzip.coding import legacy
from lmzip.coding.legacy import match
from lmzip.errors import FormatError


def test_the_current_header_packs_only_in_its_own_layout():
    old = fmt.Header(5, 1, stored=True, payload_length=5, version=10)
    with pytest.raises(ValueError, match="lmzip.coding.legacy.pack"):
        old.pack()
    assert fmt.parse_header(legacy.pack(old)).version == 10


def test_a_frame_with_blocks_whose_block_size_is_0_is_refused():
    """block_size 0 means format 8's "no blocks"; in a layout with blocks it is a corrupt header."""
    h = fmt.Header(5, 1, stored=True, payload_length=5, block_size=0)
    with pytest.raises(FormatError, match="a block longer than the block size"):
        fmt.parse_header(h.pack())


def test_a_format_10_mix_flag_is_the_match_model_and_byte_7_is_reserved():
    h = fmt.Header(10, 1, mix=True, model_name="m", n_tokens=8, segment_length=8, arith=3, payload_length=9,
                   block_size=10, version=10)
    back = fmt.parse_header(legacy.pack(h))
    assert back.match and not back.mix  # decoded with lmzip.coding.legacy.match, not counting mixed in
    raw = bytearray(legacy.pack(h))
    raw[7] = 6  # a counting level: format 11's byte, reserved before
    raw[-4:] = struct.pack("<I", zlib.crc32(bytes(raw[:-4])))
    with pytest.raises(FormatError, match="reserved bytes"):
        fmt.parse_header(bytes(raw))


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
    rows = _feed(match.MatchMixer(toks, np.array([8])), toks, np.array([8]))
    assert int(np.argmax(rows[0])) == 8 and rows[0, 8] > rows[0].sum() / 16
    assert rows.dtype == np.float32 and rows[0].astype(np.int64).sum() == (1 << 24) - 16  # still coder-ready
    assert np.all(rows == np.round(rows)) and rows.min() >= 0


def test_a_match_runs_on_into_the_next_segment():
    toks = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 1, 2, 3]])  # row 2 repeats the text across rows 0-1
    out = _feed(match.MatchMixer(toks, np.array([4, 4, 4])), toks, np.array([4, 4, 4]))
    assert int(np.argmax(out[2])) == 4  # after "1 2 3" came 4


def test_squash_and_stretch_are_inverse_integer_tables():
    assert match.squash(0) == 2048 and match.squash(-5000) == 1 and match.squash(5000) == 4095
    values = [match.squash(d) for d in range(-2047, 2048)]
    assert values == sorted(values)
    for p in (1, 100, 2048, 4000, 4095):
        assert abs(match.squash(match.stretch(p)) - p) <= max(1, p // 64)


def test_the_mixer_learns_to_trust_a_reliable_input():
    m = match.Mixer(1, (1 << 16, 1 << 15, 0))
    x = (match.stretch(400), match.stretch(3500), 256)  # the model says 10%, the match 85%: the match is right
    first = m.predict(0, x)
    for _ in range(200):
        m.learn(0, x, m.predict(0, x), True)
    assert m.predict(0, x) > first + 1000
