"""The compiled kernels (lmzip.arith.kernels) return the very bits of the torch reference in lmzip.arith.exact."""

from __future__ import annotations

import pytest
import torch

from lmzip.arith import exact, kernels
from lmzip.coding import codec
from lmzip.coding.settings import Settings
from tests.conftest import TEXT

pytestmark = pytest.mark.skipif(not kernels.AVAILABLE, reason="numba is not installed")


@pytest.fixture()
def reference(monkeypatch):
    """Run a block of code on the torch reference instead of the kernels."""

    class Switch:
        def __enter__(self):
            monkeypatch.setattr(exact, "FAST", False)

        def __exit__(self, *exc):
            monkeypatch.setattr(exact, "FAST", True)

    monkeypatch.setattr(exact, "FAST", True)
    return Switch()


def _ints(*shape, scale=1e6, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.round(torch.randn(*shape, generator=g, dtype=torch.float64) * scale)


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "gelu"])
def test_tables(reference, name):
    x = torch.cat([_ints(6, 300, scale=4e5), torch.tensor([[2.0**21, -(2.0**21), 0.5 * 2**10, 1.5 * 2**10]]
                                                           ).double().expand(6, 4)], 1)
    fast = exact.apply_table(name, x)
    with reference:
        assert torch.equal(fast, exact.apply_table(name, x))


def test_quantize_linear_norm_and_counts(reference):
    w, g, b = torch.randn(50, 40), torch.rand(40) + 0.5, torch.randn(40) * 0.1
    lin, norm = exact.QLinear(w, torch.randn(50)), exact.QNormLinear(g, b, w)
    head = exact.QNormLinear(g, b, w, out_bits=6)
    x = torch.cat([_ints(7, 40), torch.zeros(1, 40, dtype=torch.float64)])  # a zero row too
    fast = [*exact.quantize_rows(x), lin(x), norm(x), exact.counts_from_logits(head(x))]
    with reference:
        slow = [*exact.quantize_rows(x), lin(x), norm(x), exact.counts_from_logits(head(x))]
    for a, b in zip(fast, slow, strict=True):
        assert torch.equal(a.double(), b.double())


def test_whole_models_code_the_same_bytes(reference, byte_model):
    fast = codec.encode(TEXT[:400], byte_model, Settings(segment=150, mix=True))[0]
    with reference:
        assert codec.encode(TEXT[:400], byte_model, Settings(segment=150, mix=True))[0] == fast
