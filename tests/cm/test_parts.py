"""lmzip.cm.parts: the mixer's training step agrees with its definition in exact integers."""

from __future__ import annotations

import numpy as np
import pytest

from lmzip.cm.parts import mix_train

LIMIT = 0x3FFFFFFF


def reference(w: np.ndarray, x: np.ndarray, err: int) -> np.ndarray:
    """w + (x * err) >> 16 (floor), clamped to +-LIMIT, in Python's unbounded integers."""
    return np.array([max(-LIMIT, min(LIMIT, int(wi) + ((int(xi) * err) >> 16))) for wi, xi in zip(w, x, strict=True)],
                    dtype=np.int64)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_mix_train_is_the_exact_integer_step(dtype):
    """Random and extreme weights, inputs and errors (the error up to +-2^23, inputs to +-2^12, weights at the
    clamp): the 32-bit-lane step writes what the definition says, on first-layer (int32) and final (int64) inputs."""
    rng = np.random.default_rng(7)
    n = 67
    errs = [int(e) for e in rng.integers(-(1 << 23), 1 << 23, 300)]
    errs += [(1 << 23) - 1, -(1 << 23), 255, -255, 256, -256, -257, 1, -1, 0]
    for err in errs:
        w = rng.integers(-LIMIT, LIMIT + 1, size=(2, n)).astype(np.int32)
        w[1, :8] = [LIMIT, -LIMIT, LIMIT - 1, -LIMIT + 1, 0, 1, -1, LIMIT]
        x = rng.integers(-4096, 4097, size=n).astype(dtype)
        x[:4] = [4096, -4096, 2047, -2047]
        want = reference(w[1], x, err)
        mix_train(w, 1, x, n, err, 0)
        assert np.array_equal(w[1].astype(np.int64), want), err


def test_mix_train_skips_a_tiny_error_and_keeps_outside_its_span():
    """An error inside +-skip moves nothing; inputs before ``lo`` and from ``n`` on keep their weights."""
    w = np.full((1, 10), 1000, dtype=np.int32)
    x = np.full(10, 2000, dtype=np.int32)
    mix_train(w, 0, x, 10, 99, 100)
    assert (w == 1000).all()
    mix_train(w, 0, x, 7, 1 << 20, 100, 3)
    assert (w[0, :3] == 1000).all() and (w[0, 7:] == 1000).all() and (w[0, 3:7] == 1000 + (2000 << 4)).all()
