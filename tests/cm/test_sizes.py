"""lmzip.cm.sizes: what a cm version's tables hold; version 26 looks up version 25's contexts less DROPPED."""

from __future__ import annotations

import numpy as np

from lmzip import cm
from lmzip.cm import model
from lmzip.cm.sizes import DROPPED, FULL, KEEP, n_contexts, n_hashed, n_inputs
from tests.cm.feed import looked_up
from tests.conftest import TEXT


def test_version_26_looks_up_version_25s_contexts_but_the_dropped():
    """Its rows are version 25's in order, less DROPPED: the same contexts, computed by the same histories."""
    text = b"Name:\n  Algeria\nRailroads: 4,060 km total (2,616 km standard gauge)\n" + TEXT[:300] * 2
    v25, v26 = looked_up(text, 25), looked_up(text, 26)
    assert len(v26[0]) == n_hashed(26) == FULL - len(DROPPED) and len(v25[0]) == FULL == n_contexts(26)
    assert all((b == a[list(KEEP)]).all() for a, b in zip(v25, v26, strict=True)) and not set(DROPPED) & set(KEEP)
    for row in (13, 38, 40):  # the indirect, token-indirect and word-indirect contexts, written after `contexts`
        assert len({int(v[KEEP.index(row)]) for v in v26}) > 50
    assert set(range(7)) <= set(KEEP)  # the orders and the two word models the run model reads stay rows 0-6
    assert n_inputs(26) == n_inputs(25) - 3 * len(DROPPED)


def test_version_26_codes_with_less_memory_and_decodes():
    """Nine hashed models fewer: its tables are smaller at every level; its files decode."""
    assert all(model.table_bytes(lv, 26) < model.table_bytes(lv, 25) for lv in range(1, 10))
    blob = cm.compress(TEXT * 3, 7, version=26)
    assert blob[4] == 26 and cm.decompress(blob) == TEXT * 3
    assert blob[18:] != cm.compress(TEXT * 3, 7, version=25)[18:]


def test_a_silenced_row_of_version_26_is_its_own_models_inputs():
    """benchmarks/silence.py's rows are a version's own: in version 26 row k is version 25's KEEP[k]."""
    t = model.allocate(1, 26)
    models, k = t.ht.shape[0] + 2, KEEP.index(60)
    n = t.w1.shape[1] - models
    mask = model._mask(0, t, (k,))
    assert sorted(np.flatnonzero(mask == 0)) == [2 * k + 4, 2 * k + 5, n + k + 2]
