"""lmzip.cm.loop: what counting's loop and the mixed loop share; here, weight rows touched only when first chosen."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from lmzip.cm import model

TEXT = (Path(__file__).parents[2] / "corpora" / "canterbury" / "alice29.txt").read_bytes()[:6000]


def test_a_short_input_touches_only_the_weight_rows_it_chooses_and_writes_the_same_bytes():
    """From version 5 the first-layer weights start as zeros and a row takes its start weight when first chosen:
    most rows stay untouched, and the payload is the one the rows filled from the start write (every version's:
    the golden digests of tests/cm/test_cm.py)."""
    version = 20
    src = np.frombuffer(TEXT, dtype=np.uint8)
    lazy = model.allocate(7, version, len(TEXT))
    assert lazy.start == model.first_weight(version) and not lazy.w1.any()
    filled = model.allocate(7, version, len(TEXT))
    filled = replace(filled, w1=np.full_like(filled.w1, filled.start), start=0)
    payload = model.run(True, src, len(TEXT), lazy)
    assert bytes(payload) == bytes(model.run(True, src, len(TEXT), filled))
    used = lazy.w1.any(axis=1)
    assert 0 < used.sum() < len(used) // 10


def test_before_version_5_the_rows_are_filled():
    """Versions without a count of each set's uses fill every row at the start."""
    t = model.allocate(7, 4, 1000)
    assert t.start == 0 and (t.w1 == model.first_weight(4)).all()
