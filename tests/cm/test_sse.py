"""Version 22's last SSE steps (lmzip.cm.sse): the calibration starts as the identity and learns what near-certain
bits really miss, its counts halve before they overflow, and version 22 codes what version 21 does, smaller."""

import numpy as np

from lmzip import cm
from lmzip.cm import format as fmt
from lmzip.cm import sse
from lmzip.cm.model import apm3_table
from tests.conftest import TEXT


def _table():
    return apm3_table(fmt.CALIBRATED)


def test_the_table_holds_the_stages_and_the_counts_after_the_misses_stage():
    t = _table()
    assert t.shape[0] == sse.FIRST * 33 + sse.ENTRIES and t.dtype == np.int32
    assert sse.has_tail(t) and not sse.has_tail(apm3_table(21))
    assert apm3_table(21).shape[0] == sse.FIRST * 33


def test_the_calibration_starts_as_the_identity():
    aj = np.zeros(8, dtype=np.int64)
    t = _table()
    for q in (100, 2048 * 16, 60000):  # every stage an identity map: the refined p comes back (to rounding)
        p = sse.tail_p(t, aj, q >> 4, q, 0x41424344, 5, 2, 77)
        assert abs(p - q) < 0.01 * 65536, q


def test_near_certain_bits_grow_nearly_free():
    aj = np.zeros(8, dtype=np.int64)
    t = _table()
    first = sse.tail_p(t, aj, 4095, 65535, 7, 1, 0, 0)
    for _ in range(20000):  # the same context, always a 1
        sse.tail_p(t, aj, 4095, 65535, 7, 1, 0, 0)
        sse.tail_learn(t, aj, 1)
    last = sse.tail_p(t, aj, 4095, 65535, 7, 1, 0, 0)
    assert 65536 - last < (65536 - first) / 4  # a 0 now predicted several times less likely
    assert last <= 65535


def test_a_bin_halves_its_counts_before_they_overflow():
    aj = np.zeros(8, dtype=np.int64)
    t = _table()
    sse.tail_p(t, aj, 2048, 2048 * 16, 0, 1, 3, 0)
    at = aj[7]
    t[at], t[at + 1] = 1000, sse.LIMIT
    sse.tail_learn(t, aj, 1)
    assert (t[at], t[at + 1]) == (500, (sse.LIMIT + 1) >> 1)


def test_version_22_codes_a_run_smaller_and_round_trips():
    runs = b"a" * 50000
    v22 = cm.compress(runs, 1, version=fmt.CALIBRATED)
    assert cm.decompress(v22) == runs and len(v22) <= 27  # 25 bytes; version 21: 32, an APM's floor on every bit
    blob = cm.compress(TEXT, 7)
    assert blob[4] >= fmt.CALIBRATED and cm.decompress(blob) == TEXT  # level 7: version 22's SSE from 22 on


def test_where_the_image_model_picks_the_context_only_the_calibration_learns():
    aj = np.zeros(8, dtype=np.int64)
    t = _table()
    before = t.copy()
    sse.tail_p(t, aj, 100, 30000, 0x41424344, 1, 0, -1)
    assert aj[4] == -1
    sse.tail_learn(t, aj, 1)
    assert list(np.nonzero(t != before)[0]) == [aj[7] + 1]  # the bin's count of 1s, no stage's entry
