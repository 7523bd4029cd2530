"""The deterministic float64 of learning while coding: compiled kernels equal their torch references
bit for bit, products and sums do not depend on how the work is cut, and the hand-written gradients
are the model's true gradients."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from lmzip.arith import detfloat as D
from lmzip.coding import learn
from lmzip.models.model import GPTConfig, LSTMConfig, build_model


@pytest.fixture
def x():
    g = torch.Generator().manual_seed(0)
    t = torch.randn(200, 301, generator=g, dtype=torch.float64) * 6
    t[0, :7] = torch.tensor([0.0, -0.0, 1e-300, 40.0, -40.0, 800.0, -800.0], dtype=torch.float64)
    return t


def _both(f, monkeypatch):
    fast = f()
    monkeypatch.setattr(D, "FAST", False)
    ref = f()
    monkeypatch.setattr(D, "FAST", True)
    return (fast if isinstance(fast, tuple) else (fast,)), (ref if isinstance(ref, tuple) else (ref,))


@pytest.mark.skipif(not D.FAST, reason="numba is not installed")
@pytest.mark.parametrize("name", ["dexp", "sigmoid", "tanh", "gelu", "quant-rows", "quant-cols", "quant-rows-of-view",
                                  "quant-cols-of-view", "dmm", "dmm-limbs-of-views", "softmax", "softmax-grad"])
def test_compiled_kernels_equal_the_torch_reference(x, name, monkeypatch):
    y = torch.arange(200) * 7 % 301
    w = torch.rand(200, generator=torch.Generator().manual_seed(1), dtype=torch.float64)

    def limbs():
        with D.products(2):  # the transposed view's limbs come from its contiguous transpose, uncopied
            return D.dmm(x.t(), x), D.dmm(x[:, :150], x[:150])

    f = {"dexp": lambda: D.dexp(-x.abs()), "sigmoid": lambda: D.sigmoid(x), "tanh": lambda: D.tanh(x),
         "gelu": lambda: D.gelu(x), "quant-rows": lambda: D.quant(x, -1, 20), "quant-cols": lambda: D.quant(x, 0, 17),
         "quant-rows-of-view": lambda: D.quant(x.t(), -1, 20), "quant-cols-of-view": lambda: D.quant(x.t(), 0, 17),
         "dmm": lambda: D.dmm(x, x.t()), "dmm-limbs-of-views": limbs, "softmax": lambda: D.softmax(x),
         "softmax-grad": lambda: D.softmax_grad(x.clone(), y, w)}[name]
    fast, ref = _both(f, monkeypatch)
    assert all(torch.equal(a, b) for a, b in zip(fast, ref, strict=True))


def test_a_right_operand_quantized_once_gives_dmms_bits(x):
    cases = [(x[:64].t(), [x, x[:5]]),  # a transposed weight [301, 64]
             (x[:, :48].contiguous(), [x.t(), x[:5, :200]])]  # a plain [200, 48]; a transposed and a sliced a
    for version in (1, 2):
        with D.products(version):
            for b, lefts in cases:
                f = D.by(b)
                for a in lefts:
                    assert torch.equal(f(a), D.dmm(a, b))


def test_int8_limb_products_in_passes_of_a_few_rows_give_the_same_bits(x, monkeypatch):
    with D.products(2):
        whole = D.dmm(x, x[:64].t())
        monkeypatch.setattr(D, "_PASS", 64 * 7)  # seven rows per pass
        assert torch.equal(D.dmm(x, x[:64].t()), whole)


def _worst(got, want):
    """Where ``got`` is furthest from ``want`` (relative): the index, both values there, the error."""
    err = ((got - want).abs() / want.abs()).view(-1)
    i = int(err.argmax())
    return i, got.view(-1)[i].item(), want.view(-1)[i].item(), err[i].item()


def _each(f, t):
    """``f`` of every element through the C library's scalar function: torch's vectorized exp is not the reference."""
    return torch.tensor([f(v) for v in t.view(-1).tolist()], dtype=torch.float64).view(t.shape)


def _softmax(t):
    """Softmax of each row in scalar libm exp and an exactly rounded sum."""
    rows = [[math.exp(v - max(r)) for v in r] for r in t.tolist()]
    return torch.tensor([[e / math.fsum(r) for e in r] for r in rows], dtype=torch.float64)


def _gelu(v):
    return 0.5 * v * (1.0 + math.tanh(0.7978845608028654 * (v + 0.044715 * v**3)))


def test_functions_are_accurate(x):
    # The references are scalar libm: one CI machine's torch.exp gave exp(-6.0352543515180805) 3.3e-9 off (2026-12-05)
    n = -x.abs().clamp(max=700.0)  # dexp saturates below -700
    got, want = D.dexp(n), _each(math.exp, n)
    i, *worst = _worst(got, want)
    assert torch.allclose(got, want, rtol=1e-12, atol=0), (n.view(-1)[i].item(), *worst)
    assert torch.allclose(D.tanh(x), _each(math.tanh, x), rtol=0, atol=1e-13)
    assert torch.allclose(D.gelu(x)[0], _each(_gelu, x), rtol=0, atol=1e-12)
    assert torch.allclose(D.softmax(x), _softmax(x), rtol=1e-9, atol=1e-300)


def test_products_and_sums_do_not_depend_on_how_the_work_is_cut(x):
    w = x[:, :64].t().contiguous() * 1e-3  # [64, 200]
    whole = D.dmm(w, x)
    rows = torch.cat([D.dmm(w[i : i + 7], x) for i in range(0, 64, 7)])
    assert torch.equal(whole, rows)
    assert torch.equal(D.dsum(x, 0), D.dsum(x.flip(0), 0))  # any order of the terms: the same bits


@pytest.mark.parametrize("cfg", [GPTConfig(vocab_size=50, n_layer=2, n_embd=48, n_head=6, n_kv_head=2, context=64),
                                 LSTMConfig(vocab_size=50, n_layer=2, n_embd=40, context=64)], ids=["gpt", "lstm"])
def test_hand_written_gradients_are_the_models_gradients(cfg, monkeypatch):
    torch.manual_seed(0)
    m = build_model(cfg).double()
    with torch.no_grad():
        for p in m.parameters():
            p += torch.randn_like(p) * 0.05
    x, y = torch.randint(0, 51, (3, 16)), torch.randint(0, 50, (3, 16))
    gelu = F.gelu
    monkeypatch.setattr(F, "gelu", lambda t: gelu(t, approximate="tanh"))  # the form learning uses
    F.cross_entropy(m(x).flatten(0, 1), y.flatten()).backward()
    monkeypatch.undo()
    with torch.no_grad():
        w = torch.full((48,), 1 / 48, dtype=torch.float64)
        got = (learn.gpt_grads if isinstance(cfg, GPTConfig) else learn.lstm_grads)(m, x, y.flatten(), w)
    for name, p in m.named_parameters():
        assert (got[name] - p.grad).abs().max() <= 1e-4 * p.grad.abs().max(), name


def test_square_roots_are_correctly_rounded_on_any_cpu():
    """exact.sqrt, which the LayerNorms and Adam of learning while coding (and the exact predictor's norms) use,
    rounds as IEEE 754 does (math.sqrt is the C library's): torch.sqrt on the CPU is MKL's vector math, an ulp
    off on ~1% of float64 inputs, differently with AVX-512 than with AVX2, which decoded a format-8
    learning-from-scratch file wrong on an AVX-512 CPU."""
    import math
    from pathlib import Path

    from lmzip.arith import exact

    g = torch.Generator().manual_seed(0)
    x = torch.cat([torch.rand(20000, generator=g, dtype=torch.float64) * 1e6, torch.arange(1.0, 20001.0,
                                                                                           dtype=torch.float64)])
    want = torch.tensor([math.sqrt(v) for v in x.tolist()], dtype=torch.float64)
    assert torch.equal(exact.sqrt(x), want)
    assert torch.equal(exact.sqrt(x.view(200, 200)), want.view(200, 200))
    root = Path(exact.__file__).parent.parent
    for f in ("arith/exact.py", "arith/detfloat.py", "coding/learn.py"):  # where every bit counts
        assert "torch.sqrt(" not in (root / f).read_text().replace("return torch.sqrt(x)", ""), f
