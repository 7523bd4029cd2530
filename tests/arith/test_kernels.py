"""The compiled kernels (lmzip.arith.kernels) return the very bits of the torch reference in lmzip.arith.exact."""

from __future__ import annotations

import types

import pytest
import torch

from lmzip.arith import detfloat, exact, gemm, kernels, versions
from lmzip.coding import codec
from lmzip.coding import format as fmt
from lmzip.coding.settings import Settings
from lmzip.models.qmodel import QK_CLAMP
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


@pytest.mark.parametrize("quant", [versions.Q9, versions.Q8], ids=["arith1", "arith3"])
@pytest.mark.parametrize("kernel", [gemm.INT_MM, gemm.ONEDNN, gemm.FLOAT32])
def test_quantize_linear_norm_and_counts(reference, monkeypatch, quant, kernel):
    """Arithmetic 3 on the CPU multiplies int8 matrices (either int8 kernel), or float32 where they are
    slow or missing; the torch reference multiplies float32 everywhere: all give the same integers."""
    if kernel != gemm.FLOAT32 and not gemm.works(kernel):
        pytest.skip(f"{kernel} does not run here")
    monkeypatch.setattr(exact, "KERNEL", kernel)
    int8 = kernel != gemm.FLOAT32
    w, g, b = torch.randn(50, 40), torch.rand(40) + 0.5, torch.randn(40) * 0.1
    lin, norm = exact.QLinear(w, torch.randn(50), quant=quant), exact.QNormLinear(g, b, w, quant=quant)
    head = exact.QNormLinear(g, b, w, out_bits=6, quant=quant)
    assert (lin.gemm.w8 is not None) == (int8 and quant.int8)
    x = torch.cat([_ints(7, 40), torch.zeros(1, 40, dtype=torch.float64)])  # a zero row too
    fast = [*exact.quantize_rows(x, quant), lin(x), norm(x), exact.counts_from_logits(head(x))]
    with reference:
        slow = [*exact.quantize_rows(x, quant), lin(x), norm(x), exact.counts_from_logits(head(x))]
    for a, b in zip(fast, slow, strict=True):
        assert torch.equal(a.double(), b.double())


def test_counts_of_tied_and_signed_zero_logits_are_the_references(reference):
    """The first largest entry takes what rounding leaves, however the largest is found: ties at the top,
    -0.0 beside 0.0, a row of one value, logits far below the top (the exp table's last entry)."""
    x = _ints(5, 4096, scale=300.0, seed=3)
    x[0, 7] = x[0, 4000] = x[0].max() + 3  # a tie at the top, the first not at the start
    x[1] = 0.0
    x[1, ::3] = -0.0
    x[2] = 5.0
    x[3, 11] = 1e6  # every other entry beyond the table
    fast = exact.counts_from_logits(x)
    with reference:
        assert torch.equal(fast.double(), exact.counts_from_logits(x).double())
    assert (fast.double().sum(-1) == exact.count_total(4096)).all()


@pytest.mark.parametrize("kernel", gemm.INT8_KERNELS)
def test_int8_products_at_their_limits_are_exact(monkeypatch, kernel):
    """The worst case of rule 1 for arithmetic 3: every operand at its bound, both signs, in one GEMM
    of many terms (a backend that saturated pairs of products in int16 would fail here), and a row count
    the oneDNN kernel pads. Wherever the kernel runs, fast or not (the probe may have chosen another)."""
    if not gemm.works(kernel):
        pytest.skip(f"{kernel} does not run here")
    monkeypatch.setattr(exact, "KERNEL", kernel)
    K = 1000
    q = torch.tensor([[127.0] * K, [-127.0] * K, [127.0, -127.0] * (K // 2)] * 7)
    w = exact.QLinear(torch.tensor([[1.0] * K, [-1.0] * K]), quant=versions.Q8)
    assert w.gemm.w8 is not None and w.gemm.w8.kernel == kernel
    got = torch.from_numpy(w.gemm.w8.times(q.to(torch.int8).numpy())).double()
    assert torch.equal(got, q.double() @ w.gemm.w.double().T)
    assert got[0, 0] == 127 * 63 * K


def test_whole_models_code_the_same_bytes(reference, byte_model):
    fast = codec.encode(TEXT[:400], byte_model, Settings(segment=150, mix=True))[0]
    with reference:
        assert codec.encode(TEXT[:400], byte_model, Settings(segment=150, mix=True))[0] == fast


def test_learning_products_from_int8_limbs_equal_the_float64_product(monkeypatch):
    """Arithmetic 4's learning products: four int8 GEMMs over the operands' limbs give the integers a
    float64 product of the same quantized operands gives (every row and column reaches its bound)."""
    if not gemm.works(gemm.INT_MM):
        pytest.skip("torch._int_mm does not run here")
    monkeypatch.setattr(exact, "LIMB_GEMM", True)
    g = torch.Generator().manual_seed(1)
    for M, K, N in [(33, 70, 9), (5, 1, 3), (64, 384, 200)]:
        a = torch.randn(M, K, generator=g, dtype=torch.float64) * 3
        b = torch.randn(N, K, generator=g, dtype=torch.float64).T  # a transposed weight, as linear layers pass it
        a[0] = 0.0
        with detfloat.products(2):
            fast = detfloat.dmm(a, b)
            monkeypatch.setattr(exact, "LIMB_GEMM", False)
            slow = detfloat.dmm(a, b)
            monkeypatch.setattr(exact, "LIMB_GEMM", True)
        assert torch.equal(fast, slow)
        if K > 1:
            with detfloat.products(1):
                assert not torch.equal(detfloat.dmm(a, b), fast)  # the versions differ: the switch is real


def test_the_int8_gemm_is_not_used_where_torch_gets_it_wrong(monkeypatch):
    """torch._int_mm multiplies wrongly over one term (K = 1) when the right operand is a transposed
    column (strides (1, 1), as learning passes weights); such products take the float path."""
    if not gemm.works(gemm.INT_MM):
        pytest.skip("torch._int_mm does not run here")
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-127, 128, (4, 1), generator=g, dtype=torch.int8)
    b = torch.randint(-63, 64, (5, 1), generator=g, dtype=torch.int8).T
    if torch.equal(torch._int_mm(a, b).long(), a.long() @ b.long()):
        pytest.skip("this torch multiplies K = 1 correctly")  # then the guard is only caution
    monkeypatch.setattr(exact, "KERNEL", gemm.INT_MM)  # as where the probe finds it the faster product
    monkeypatch.setattr(exact, "LIMB_GEMM", True)
    assert not exact.int8_gemm(1) and exact.int8_gemm(gemm.INT8_MIN_K)
    assert not exact.limb_gemm(1) and exact.limb_gemm(gemm.INT8_MIN_K)
    assert exact.QLinear(torch.ones(5, 1), quant=versions.Q8).gemm.w8 is None


def test_a_slow_int8_kernel_is_not_chosen(monkeypatch):
    """The product is chosen by speed, not by whether it works: an int8 kernel far slower than the float32
    product of the same integers (torch._int_mm without VNNI: up to 60x) is left out; a kernel that
    multiplies wrongly is never taken, even where a user insists."""
    import time

    runs = [k for k in gemm.INT8_KERNELS if gemm.works(k)]
    if not runs:
        pytest.skip("no int8 kernel runs here")
    real = gemm.Int8Weights.times
    monkeypatch.delenv("LMZIP_INT8_GEMM", raising=False)

    def slow(self, q):
        time.sleep(0.05)  # far slower than any float32 product, even on a busy machine
        return real(self, q)

    monkeypatch.setattr(gemm.Int8Weights, "times", slow)
    monkeypatch.setattr(gemm, "works", lambda k: k in runs)
    assert gemm.choose() == gemm.FLOAT32
    monkeypatch.setenv("LMZIP_INT8_GEMM", "on")  # a user may insist
    assert gemm.choose() in runs
    monkeypatch.setenv("LMZIP_INT8_GEMM", runs[0])  # on one kernel
    assert gemm.choose() == runs[0]
    monkeypatch.setattr(gemm.Int8Weights, "times", real)
    monkeypatch.setattr(gemm, "works", lambda k: False)  # multiplies wrongly here
    for want in ("on", "auto", *gemm.INT8_KERNELS):
        monkeypatch.setenv("LMZIP_INT8_GEMM", want)
        assert gemm.choose() == gemm.FLOAT32
    monkeypatch.setenv("LMZIP_INT8_GEMM", "off")
    assert gemm.choose() == gemm.FLOAT32


def test_the_probe_skips_int_mm_without_vnni_and_times_a_loser_once(monkeypatch):
    """Where the flags show no VNNI, auto never times torch._int_mm (its generic loop costs a quarter
    second a start); asked for by name it still runs. A kernel three times slower is timed once."""
    timed = []
    monkeypatch.setattr(gemm, "works", lambda k: True)
    monkeypatch.setattr(gemm, "probe_time", lambda k, beaten=0: timed.append(k) or {"float32": 1.0}.get(k, 2.0))
    monkeypatch.setattr(gemm, "lacks_vnni", lambda: True)
    monkeypatch.delenv("LMZIP_INT8_GEMM", raising=False)
    assert gemm.timings() == {gemm.FLOAT32: 1.0, gemm.ONEDNN: 2.0} and timed[0] == gemm.FLOAT32
    monkeypatch.setenv("LMZIP_INT8_GEMM", "int_mm")
    assert gemm.choose() == gemm.INT_MM
    calls = []
    assert gemm._best_time(lambda: calls.append(1), reps=3, beaten=-1.0) >= 0 and len(calls) == 2  # build + one
    calls.clear()
    gemm._best_time(lambda: calls.append(1), reps=3)
    assert len(calls) == 4


def test_a_kernel_that_multiplies_wrongly_does_not_work(monkeypatch):
    """works() compares against the float64 product: a kernel that saturated, or failed, is refused."""
    real = gemm.Int8Weights.times
    monkeypatch.setattr(gemm.Int8Weights, "times", lambda self, q: real(self, q) // 2)  # wrong sums
    assert not any(gemm.works(k) for k in gemm.INT8_KERNELS)
    monkeypatch.setattr(gemm.Int8Weights, "times", lambda self, q: 1 / 0)
    assert not any(gemm.works(k) for k in gemm.INT8_KERNELS)


@pytest.mark.parametrize("mix", [False, True], ids=["model", "mixed"])
def test_every_kernel_writes_the_same_file(monkeypatch, byte_model, mix):
    """The int8 kernels and the float32 product give the same integers: the same file whichever runs."""
    real, calls = gemm.Int8Weights.times, []
    monkeypatch.setattr(gemm.Int8Weights, "times", lambda self, q: calls.append(self.kernel) or real(self, q))
    files, used = [], []
    for kernel in (gemm.FLOAT32, *(k for k in gemm.INT8_KERNELS if gemm.works(k))):
        monkeypatch.setattr(exact, "KERNEL", kernel)
        byte_model._exact.clear()  # the exact predictor is built anew, with this product
        calls.clear()
        files.append(codec.encode(TEXT[:400], byte_model, Settings(segment=150, mix=mix))[0])
        used.append(set(calls) or {gemm.FLOAT32})
    byte_model._exact.clear()
    assert [u.pop() for u in used] == [gemm.FLOAT32, *(k for k in gemm.INT8_KERNELS if gemm.works(k))]
    assert len(set(files)) == 1


@pytest.mark.parametrize("p0, T", [(0, 1), (5, 3), (13, 3)])
def test_the_cache_step_rotates_and_rounds_as_the_reference(reference, gpt_model, p0, T):
    """The fused cache step (kernels.cache_qkv) writes the keys and values and returns the queries
    that the torch reference does, at any position of the window and at the clamp (large inputs)."""
    ep = gpt_model.exact_for("cpu")
    g = torch.Generator().manual_seed(p0)
    x = torch.round(torch.randn(4, T, ep.cfg.n_embd, generator=g, dtype=torch.float64) * 2.0**16)
    scale = torch.ones(4, 1, 1, dtype=torch.float64)
    scale[0] = 2.0**12  # one stream's products past QK_CLAMP once rounded: the clamp decides
    layer = types.SimpleNamespace(qkv=lambda x: ep.layers[0].qkv(x) * scale)
    got = []
    for fast in (True, False):
        st = ep.start(4)
        st.widen()  # float32 caches: the clamp at QK_CLAMP is beyond int16
        if fast:
            q = ep._cache(layer, x, st, 0, p0)
        else:
            with reference:
                q = ep._cache(layer, x, st, 0, p0)
        got.append((q, st.k[0], st.v[0]))
    assert got[0][1].abs().max() == QK_CLAMP  # the clamp was reached
    for a, b in zip(*got, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize("narrow", [3.0, 200.0, 2000.0])
def test_int16_caches_widen_where_a_value_does_not_fit_and_code_the_same_bytes(monkeypatch, gpt_model, narrow):
    """Caches start as int16 and widen to float32 the moment a key or value would not fit (at the first
    pass, or in the middle of the stream, the window's shift included): the pass is done again and the file is the
    one float32 caches write."""
    from lmzip.models import qmodel

    text = TEXT[:700]
    want = codec.encode(text, gpt_model, Settings(segment=300))[0]  # 300 bytes: the 16-token window shifts
    widened = []
    real = qmodel.ExactGPTState.widen
    monkeypatch.setattr(qmodel.ExactGPTState, "widen", lambda st: widened.append(1) or real(st))
    monkeypatch.setattr(qmodel, "NARROW", narrow)
    gpt_model._exact.clear()
    assert gpt_model.exact_for("cpu").start(1).k[0].dtype == torch.int16
    blob = codec.encode(text, gpt_model, Settings(segment=300))[0]
    gpt_model._exact.clear()
    assert widened and blob == want
    assert codec.decode(*fmt.unpack(blob), gpt_model) == text
