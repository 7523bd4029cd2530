"""How the wing's loops compile: numba's inliner copies a helper's IR with one memo an inlining."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import njit
from numba.core import inline_closurecall as inliner

from lmzip.cm import jitcache

pytestmark = pytest.mark.skipif(not jitcache.inliner_read(),
                                reason=f"numba {numba.__version__}: its inliner is not the one read; read it again")


@njit(inline="always")
def _helper(a, k):
    """Several blocks (a loop, branches) and several variables: the scope the inliner copies."""
    total = 0
    for i in range(a.shape[0]):
        v = a[i] * k
        if v > 10:
            total += v
        elif v < 0:
            total -= v
        else:
            total += 1
    return total


@njit
def _caller(a):
    return _helper(a, 3) + _helper(a, -2)


def test_an_inlined_helper_s_blocks_share_one_copy_of_its_scope(monkeypatch):
    """Without the shared memo each of the helper's blocks carried a copy of the whole scope of its own (a loop's
    compile went mostly into those copies); with it, one copy an inlining, and the code computes the same."""
    assert jitcache.share_the_inliners_memo() and isinstance(inliner.copy, jitcache._OneMemo)
    seen = []
    plain = inliner._get_all_scopes

    def spy(blocks):
        seen.append(len({id(b.scope) for b in blocks.values()}))
        return plain(blocks)

    monkeypatch.setattr(inliner, "_get_all_scopes", spy)
    a = np.array([1, 5, -7, 0, 4], dtype=np.int64)
    want = sum(v * 3 if v * 3 > 10 else (-v * 3 if v * 3 < 0 else 1) for v in a.tolist())
    want += sum(v * -2 if v * -2 > 10 else (2 * v if v * -2 < 0 else 1) for v in a.tolist())
    assert _caller.py_func(a) == want == _caller(a)
    assert seen and all(n == 1 for n in seen), seen


def test_the_memo_is_the_inlining_s_alone():
    """Outside an inlining, deepcopy is copy's own: no memo kept between calls."""
    jitcache.share_the_inliners_memo()
    shared = inliner.copy
    assert shared.memo is None
    x = [[1], [2]]
    y = shared.deepcopy(x)
    assert y == x and y[0] is not x[0] and shared.deepcopy(x)[0] is not y[0]
    assert shared.copy is __import__("copy").copy
