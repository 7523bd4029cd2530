"""lmzip.cm.body and lmzip.cm.sizes: where every model of every cm version reads and writes its state map."""

from __future__ import annotations

import pytest

from lmzip.cm import format as fmt
from lmzip.cm.body import state_at
from lmzip.cm.sizes import SM_WIDE, n_models, sm_shape


@pytest.mark.parametrize("version", [v for v in fmt.VERSIONS if v != fmt.ORDER0])  # 28: no tables
def test_every_models_state_map_lies_inside_the_maps_and_apart(version):
    """No model reads or writes past the state maps (the compiled loop checks no bounds: a model beyond them
    corrupts memory), and no two models share an entry."""
    rows, cols = sm_shape(version)
    wide = cols == SM_WIDE
    width = 2048 if wide else 1024  # a slot's states
    owner = {}
    for m in range(n_models(version)):
        for j in range(8):
            for c0 in ([1 << j] if not wide else range(1 << j, 2 << j)):
                r, col = state_at(wide, m, j, c0)
                assert 0 <= r < rows and 0 <= col and col + width <= cols, (m, j, c0)
                assert owner.setdefault((r, col), m) == m, (m, j, c0)
