"""Exact arithmetic: the building blocks of predictions that are the same integers on every machine.

THE EXACTNESS RULE (arithmetic versions 1 and 3; every portable .lmz file relies on it, and only this
module and the exact predictors built from it, lmzip.models.qmodel, may compute what reaches the coder):
every number that feeds the range coder is a pure function of the input and the model file. So on
the coding path
  1. a matrix product multiplies integer-valued operands (weights in ±wq, activations in ±act, the
     ``Quant`` of the file's arithmetic) over chunks of at most ``chunk`` terms, so every partial sum
     is an integer below 2^24 and float32 holds it exactly, whatever order, blocking, ISA, thread count
     or GPU the backend uses; chunks are added in float64, where integers are exact up to 2^53.
     Arithmetic 3's operands fit int8 (±63 x ±127), so an int8 GEMM with int32 sums (lmzip.arith.gemm:
     oneDNN's kernels) computes the same integers faster; its weights keep to 7 bits because the
     kernels of CPUs without VNNI add pairs of u8 x s8 products in int16 after shifting the
     activations by 128 (255 * 63 * 2 < 2^15: no pair saturates; with 8-bit weights some do);
  2. every other sum or product is of integers in float64 or int64 that stay below 2^53 (so exact
     in any order), or a max, or a lookup;
  3. the only other operations are single, correctly rounded IEEE operations on float64 (+, -, *,
     /, sqrt), each its own kernel in an order this code fixes, followed where it matters by
     round/floor back to integers; never a fused op (addcmul, lerp, alpha=), never exp, log, tanh,
     sigmoid, erf, softmax or a library norm;
  4. the non-linear functions (exp, sigmoid, tanh, GELU, cos/sin) are tables of integers computed
     once with Python's decimal module, whose results are correctly rounded and so the same
     everywhere; the model's weights are quantized from the stored bf16 file by rule 3 alone.
The coder then receives integer counts that sum to exactly COUNT_TOTAL (``counts_from_logits``),
and constriction codes count + 1 out of 2^24 exactly (lmzip.coding.coder). A test runs the same input
under every CPU kernel family, oneDNN ISA and thread count and compares a digest of every count.

Learning while coding (arithmetics 2 and 4) computes new weights, not counts; they reach the coder only
through the exact predictor rebuilt from them, and lmzip.arith.detfloat makes their own computation the
same on every machine by the same means (quantized operands, exact sums, single IEEE operations).
"""

from __future__ import annotations

import decimal
import os
from functools import cache

import numpy as np
import torch
from torch import Tensor

from lmzip.arith import gemm, kernels
from lmzip.arith.versions import Quant

# the compiled kernels (lmzip.arith.kernels) do on the CPU what the torch code below does anywhere, bit for
# bit; LMZIP_REFERENCE=1 runs the torch code on the CPU too (tests compare the two)
FAST = kernels.AVAILABLE and not os.environ.get("LMZIP_REFERENCE")


def _fast(x: Tensor) -> bool:
    return FAST and x.device.type == "cpu" and x.dtype == torch.float64 and x.dim() >= 2


def _rows(x: Tensor):
    """x as a C-contiguous [rows, last dim] numpy array (a view where it can be)."""
    return x.reshape(-1, x.shape[-1]).contiguous().numpy()


FRAC = 16  # fixed point of the residual stream and the layer outputs: real = integer / 2^FRAC


# each arithmetic's quantization (Quant: Q9, Q8) is in lmzip.arith.versions, beside the rest of its recipe
LOGIT_STEPS = 64  # logits and attention scores in 1/64 nat
PRECISION = 24  # the coder's probabilities are counts of 1/2^24


def count_total(vocab: int) -> int:
    """What the counts of one row sum to: constriction adds one to each, making 2^24."""
    return (1 << PRECISION) - vocab


# ---------------------------------------------------------------------------- tables (decimal)


def _ctx() -> decimal.Context:
    return decimal.Context(prec=40, rounding=decimal.ROUND_HALF_EVEN)


def _round(x: decimal.Decimal) -> int:
    return int(x.to_integral_value(rounding=decimal.ROUND_HALF_EVEN, context=_ctx()))


@cache
def exp_table(scale_bits: int) -> Tensor:
    """round(2^scale_bits * exp(-i/LOGIT_STEPS)) for i = 0.. until it rounds to 0 (int64)."""
    c, out, i = _ctx(), [], 0
    while True:
        v = _round(c.multiply(c.exp(c.divide(decimal.Decimal(-i), LOGIT_STEPS)), 1 << scale_bits))
        out.append(v)
        if v == 0:
            return torch.tensor(out, dtype=torch.int64)
        i += 1


_PI = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def _erf(x: decimal.Decimal, c: decimal.Context) -> decimal.Decimal:
    """erf by its Taylor series (for |x| <= 4.3, where 30 digits leave 20 after cancellation)."""
    total, term, n = decimal.Decimal(0), x, 0
    x2 = c.multiply(x, x)
    while True:
        add = c.divide(term, 2 * n + 1)
        if add == 0 or abs(add) < decimal.Decimal(10) ** -25:
            break
        total = c.add(total, add)
        n += 1
        term = c.divide(c.multiply(-term, x2), n)
    return c.multiply(total, c.divide(2, c.sqrt(_PI)))


# the tables below hold f at x = i / 2^TABLE_BITS for x in [-TABLE_RANGE, TABLE_RANGE]; between two
# entries f is interpolated linearly in integers (error below 1e-5 for these smooth functions)
TABLE_BITS = 6
TABLE_RANGE = 16


@cache
def function_table(name: str) -> Tensor:
    """round(2^FRAC * f(i / 2^TABLE_BITS)), i = -TABLE_RANGE*2^TABLE_BITS .. +, as float64 integers."""
    c = decimal.Context(prec=30, rounding=decimal.ROUND_HALF_EVEN)
    n = TABLE_RANGE << TABLE_BITS
    one = decimal.Decimal(1)
    vals = []
    for i in range(-n, n + 1):
        x = c.divide(decimal.Decimal(i), 1 << TABLE_BITS)
        if name == "sigmoid":
            y = c.divide(one, c.add(one, c.exp(-x)))
        elif name == "tanh":
            y = c.subtract(c.divide(2, c.add(one, c.exp(c.multiply(-2, x)))), one)
        elif name == "gelu":
            # |gelu(x) - max(x, 0)| < 1e-8 beyond |x| = 6, where the series would need more digits
            y = (x if x > 0 else 0) if abs(x) > 6 else c.multiply(c.multiply(x, decimal.Decimal("0.5")),
                                                                  c.add(one, _erf(c.divide(x, c.sqrt(2)), c)))
        elif name == "gelu_tanh":  # GPT-2's gelu_new: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            u = c.multiply(c.sqrt(c.divide(2, _PI)), c.add(x, c.multiply(decimal.Decimal("0.044715"), c.power(x, 3))))
            t = c.subtract(c.divide(2, c.add(one, c.exp(c.multiply(-2, u)))), one)
            y = c.multiply(c.multiply(x, decimal.Decimal("0.5")), c.add(one, t))
        elif name == "silu":  # Llama's SwiGLU gate: x sigmoid(x)
            y = c.divide(x, c.add(one, c.exp(-x)))
        else:
            raise ValueError(name)
        vals.append(_round(c.multiply(y, 1 << FRAC)))
    return torch.tensor(vals, dtype=torch.float64)


RELU_LIKE = ("gelu", "gelu_tanh", "silu")  # f(x) = x above the table, ~0 below it
FINE_BITS = 10  # the tables are looked up at 1/2^FINE_BITS, interpolated from the decimal ones once


@cache
def _fine_table(name: str, device: str) -> Tensor:
    """The table at 1/2^FINE_BITS steps, interpolated linearly in integers from function_table."""
    t = function_table(name)
    k = 1 << (FINE_BITS - TABLE_BITS)
    lo, hi = t[:-1, None], t[1:, None]
    r = torch.arange(k, dtype=torch.float64)[None, :]
    fine = (lo + torch.round((hi - lo) * r / k)).reshape(-1)
    return torch.cat([fine, t[-1:]]).to(device)


def apply_table(name: str, x: Tensor) -> Tensor:
    """f(x) for fixed-point x (real = x / 2^FRAC), rounded to 1/2^FINE_BITS and looked up; outside
    the table f saturates (sigmoid, tanh) or is the identity / zero (GELU)."""
    table = _fine_table(name, str(x.device))
    n = TABLE_RANGE << FINE_BITS
    if _fast(x):
        return torch.from_numpy(kernels.table(_rows(x), table.numpy(), n, FRAC - FINE_BITS,
                                              name in RELU_LIKE)).view(x.shape)
    idx = torch.round(x / (1 << (FRAC - FINE_BITS))).clamp_(-n, n).add_(n)  # exact: power-of-two division
    y = table.index_select(0, idx.long().view(-1)).view(x.shape)
    if name in RELU_LIKE:
        y = torch.where(x >= n << (FRAC - FINE_BITS), x, y)
    return y


@cache
def rotary_table(n: int, dim: int, bits: int = 14, base: float = 10000) -> tuple[Tensor, Tensor]:
    """round(2^bits * cos/sin(p * base^(-2i/dim))) [n, dim/2] (float64 integers), in decimal: each
    frequency's cos/sin by series, then positions by the angle-addition recurrence."""
    c = decimal.Context(prec=40, rounding=decimal.ROUND_HALF_EVEN)
    cols_c, cols_s = [], []
    for i in range(dim // 2):
        inv = c.power(decimal.Decimal(base), c.divide(decimal.Decimal(-2 * i), dim))
        c1, s1 = _cos_sin(inv, c)
        co, si, rc, rs = decimal.Decimal(1), decimal.Decimal(0), [], []
        for _ in range(n):
            rc.append(_round(c.multiply(co, 1 << bits)))
            rs.append(_round(c.multiply(si, 1 << bits)))
            co, si = c.subtract(c.multiply(co, c1), c.multiply(si, s1)), c.add(c.multiply(si, c1), c.multiply(co, s1))
        cols_c.append(rc)
        cols_s.append(rs)
    return (torch.tensor(cols_c, dtype=torch.float64).T.contiguous(),
            torch.tensor(cols_s, dtype=torch.float64).T.contiguous())


_TWO_PI = decimal.Decimal("6.283185307179586476925286766559005768394338798750211641949889")


def _cos_sin(a: decimal.Decimal, c: decimal.Context) -> tuple[decimal.Decimal, decimal.Decimal]:
    """cos and sin by reduction to [0, 2pi) and Taylor series."""
    a = c.subtract(a, c.multiply(_TWO_PI, c.divide_int(a, _TWO_PI)))
    co, si, term, k = decimal.Decimal(0), decimal.Decimal(0), decimal.Decimal(1), 0
    while True:
        if abs(term) < decimal.Decimal(10) ** -35 and k > 2 * 6:
            break
        if k % 4 == 0:
            co = c.add(co, term)
        elif k % 4 == 1:
            si = c.add(si, term)
        elif k % 4 == 2:
            co = c.subtract(co, term)
        else:
            si = c.subtract(si, term)
        k += 1
        term = c.divide(c.multiply(term, a), k)
    return co, si


# ---------------------------------------------------------------------------- quantized operations


def div(a: Tensor, b: Tensor) -> Tensor:
    """a / b element by element, one correctly rounded division each. Both must be tensors of the
    same shape: torch divides by a Python scalar as a multiplication by its rounded reciprocal, and
    ``scalar / tensor`` as a reciprocal and a multiplication (two roundings, backend-dependent)."""
    assert isinstance(a, Tensor) and isinstance(b, Tensor)
    return torch.div(a, b)


def sqrt(x: Tensor) -> Tensor:
    """The square root element by element, correctly rounded (IEEE 754). torch.sqrt on the CPU runs MKL's
    vector math, which is accurate to about an ulp but not correctly rounded, and its AVX-512 and AVX2 code
    give different last bits (a learning-from-scratch file of format 8 decoded wrong on an AVX-512 CPU); numpy's
    is the processor's sqrt instruction. Elsewhere (a GPU) torch's own."""
    if x.device.type == "cpu":
        return torch.from_numpy(np.sqrt(x.numpy(force=True)))  # force: a copy where x needs one (grad, a view)
    return torch.sqrt(x)


def quantize_weight(w: Tensor, quant: Quant) -> tuple[Tensor, Tensor]:
    """Per output row: integers in ±wq (float32) and the row's scale (float64), w ~ q * scale."""
    w = w.detach().double()
    scale = w.abs().amax(dim=-1)
    scale = div(scale, torch.full_like(scale, quant.wq))
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    q = torch.round(w / scale[:, None])
    return q.float().contiguous(), scale


def quantize_rows(x: Tensor, quant: Quant) -> tuple[Tensor, Tensor]:
    """Per row of a float64 tensor: integers in ±act (float32) and the row's max |x| (x ~ q * m / act)."""
    if _fast(x):
        rows = _rows(x)
        q, m = kernels.quantize_rows(rows, float(quant.act), np.empty(rows.shape, dtype=np.float32))
        return torch.from_numpy(q).view(x.shape), torch.from_numpy(m).view(*x.shape[:-1], 1)
    m = x.abs().amax(dim=-1, keepdim=True)
    inv = div(torch.full_like(m, quant.act), torch.where(m > 0, m, torch.ones_like(m)))  # one division per row
    return torch.round(x * inv).float(), m


def int_matmul(q: Tensor, w: Tensor, quant: Quant, exact32: bool = False) -> Tensor:
    """q [..., K] times w [N, K] transposed, both integer-valued float32: exact, as float64 [..., N]
    (or, with ``exact32`` and one chunk, as the float32 that already holds it exactly)."""
    return gemm.int_matmul(q, w, quant.chunk, exact32)


_TIMES = gemm.timings(FAST)
KERNEL = min(_TIMES, key=_TIMES.__getitem__)  # arithmetic 3's products here (lmzip.arith.gemm): speed, never bytes
# learning's products (lmzip.arith.detfloat) multiply int8 limbs with torch._int_mm where it beats float32
LIMB_GEMM = gemm.INT_MM in _TIMES and _TIMES[gemm.INT_MM] <= _TIMES.get(gemm.FLOAT32, float("inf"))


def int8_gemm(k: int) -> bool:
    """Whether a product over ``k`` terms may use an int8 kernel here."""
    return KERNEL != gemm.FLOAT32 and k >= gemm.INT8_MIN_K


def limb_gemm(k: int) -> bool:
    """Whether learning's products over ``k`` terms multiply int8 limbs with torch._int_mm here."""
    return LIMB_GEMM and k >= gemm.INT8_MIN_K


class _Gemm:
    """The weights of one exact product in the forms the CPU and the reference multiply with."""

    def __init__(self, quant: Quant, w: Tensor):
        self.quant, self.w = quant, w  # [N, K] integer float32
        int8 = quant.int8 and int8_gemm(w.shape[1])
        self.w8 = gemm.Int8Weights(KERNEL, w.to(torch.int8)) if int8 else None

    def to(self, device: str) -> None:
        self.w = self.w.to(device)
        if self.w.device.type != "cpu":
            self.w8 = None  # elsewhere the reference's float32 products give the same integers

    def cpu(self, rows: np.ndarray, prologue) -> tuple[np.ndarray, ...]:
        """The compiled path: quantize ``rows`` with ``prologue`` into int8 or float32, then the exact
        product (int32 or float32 from an int8 kernel, float32 otherwise: the same integers)."""
        if self.w8 is not None:
            q, *rest = prologue(rows, float(self.quant.act), np.empty(rows.shape, dtype=np.int8))
            return (self.w8.times(q), *rest)
        q, *rest = prologue(rows, float(self.quant.act), np.empty(rows.shape, dtype=np.float32))
        return (int_matmul(torch.from_numpy(q), self.w, self.quant, exact32=True).numpy(), *rest)


def fixed(x: Tensor, bits: int = FRAC) -> Tensor:
    """Real float tensor -> fixed-point integers in float64 (used on weights only, never on the coding path
    for model-dependent floats that are not from the file)."""
    return torch.round(x.detach().double() * (1 << bits))


class QLinear:
    """y = x W^T (+ b) on fixed-point rows, with W quantized per output channel and x per row."""

    def __init__(self, weight: Tensor, bias: Tensor | None = None, in_bits: int = FRAC, out_bits: int = FRAC, *,
                 quant: Quant):
        self.quant = quant
        w, scale = quantize_weight(weight, quant)
        self.gemm = _Gemm(quant, w)
        # acc * m * coef = y * 2^out
        self.coef = div(scale * (1 << out_bits), torch.full_like(scale, quant.act * (1 << in_bits)))
        self.bias = fixed(bias, out_bits) if bias is not None else None

    def to(self, device: str) -> QLinear:
        self.gemm.to(device)
        self.coef = self.coef.to(device)
        self.bias = self.bias.to(device) if self.bias is not None else None
        return self

    def __call__(self, x: Tensor) -> Tensor:
        """x: fixed-point float64 [..., K] (2^in_bits per unit) -> fixed-point float64 [..., N]."""
        if _fast(x):
            acc, m = self.gemm.cpu(_rows(x), kernels.quantize_rows)
            bias = self.bias if self.bias is not None else self.coef
            y = kernels.linear_out(acc, m, self.coef.numpy(), bias.numpy(), self.bias is not None)
            return torch.from_numpy(y).view(*x.shape[:-1], y.shape[-1])
        q, m = quantize_rows(x, self.quant)
        y = torch.round(int_matmul(q, self.gemm.w, self.quant) * m * self.coef)
        return y + self.bias if self.bias is not None else y


class QNormLinear:
    """LayerNorm(x) W^T in one exact step: the norm's gain folds into W, its bias into a fixed
    output bias, and the per-row quantizer of the centred x makes the division by the standard
    deviation a single float64 division of the integer product."""

    def __init__(self, ln_weight: Tensor, ln_bias: Tensor | None, weight: Tensor, out_bits: int = FRAC, *,
                 quant: Quant, bias: Tensor | None = None, rms: bool = False):
        """``bias``: the linear layer's own bias; ``rms``: an RMSNorm (no centring, no ``ln_bias``)."""
        self.quant, self.rms = quant, rms
        w = weight.detach().double()
        wn, self.scale = quantize_weight(w * ln_weight.detach().double()[None, :], quant)
        self.gemm = _Gemm(quant, wn)
        self.rowsum = wn.double().sum(-1)  # exact: integers
        self.out = float(1 << out_bits)
        if ln_bias is None:
            self.bias = torch.zeros(w.shape[0], dtype=torch.float64)
        else:
            wq, ws = quantize_weight(w, quant)  # W beta, from integers: exact sums
            self.bias = torch.round((wq.double() @ fixed(ln_bias)) * ws * (self.out / (1 << FRAC)))
        if bias is not None:  # a sum of two integers: exact
            self.bias = self.bias + fixed(bias, out_bits)

    def to(self, device: str) -> QNormLinear:
        self.gemm.to(device)
        self.scale, self.rowsum, self.bias = (t.to(device) for t in (self.scale, self.rowsum, self.bias))
        return self

    def __call__(self, x: Tensor) -> Tensor:
        """x: integer float64 [..., C] -> fixed-point float64 [..., N] (2^out_bits per unit)."""
        C = x.shape[-1]
        if self.rms:
            return self._rms(x)
        if _fast(x):
            acc, s1, std = self.gemm.cpu(_rows(x), kernels.norm_rows)
            y = kernels.norm_out(acc, float(C), s1, self.rowsum.numpy(), self.scale.numpy(), std, self.out,
                                 self.bias.numpy())
            return torch.from_numpy(y).view(*x.shape[:-1], y.shape[-1])
        d = C * x - x.sum(-1, keepdim=True)  # C times the centred x: exact integers
        q, _ = quantize_rows(d, self.quant)
        qd = q.double()
        s1, s2 = qd.sum(-1, keepdim=True), (qd * qd).sum(-1, keepdim=True)
        var = C * s2 - s1 * s1  # C^2 times the variance of q: exact integers, >= 0
        std = sqrt(torch.where(var > 0, var, torch.ones_like(var)))
        acc = C * int_matmul(q, self.gemm.w, self.quant) - s1 * self.rowsum  # C times W(q - mean q): exact integers
        y = torch.round(acc * self.scale / std * self.out)
        return y + self.bias

    def _rms(self, x: Tensor) -> Tensor:
        """RMSNorm(x) W^T: the same single division, by C times the root mean square of q (eps ignored,
        as LayerNorm's is: it only matters for rows that are all but zero)."""
        C = x.shape[-1]
        q, _ = quantize_rows(x, self.quant)
        qd = q.double()
        ss = C * (qd * qd).sum(-1, keepdim=True)  # exact integers
        std = sqrt(torch.where(ss > 0, ss, torch.ones_like(ss)))
        acc = C * int_matmul(q, self.gemm.w, self.quant)  # exact integers
        y = torch.round(acc * self.scale / std * self.out)
        return y + self.bias


@cache
def _exp_table(bits: int, device: str) -> Tensor:
    return exp_table(bits).double().to(device)


def softmax_weights(scores: Tensor, mask: Tensor | None = None, bits: int = 16,
                    top: Tensor | None = None) -> Tensor:
    """Integer weights round(2^bits * exp(s - max s)) (float64) of integer scores in 1/LOGIT_STEPS
    nat, along the last dim; masked-out entries (mask False) get 0."""
    table = _exp_table(bits, str(scores.device))
    if mask is not None:
        scores = torch.where(mask, scores, torch.full_like(scores, -1e300))
    if top is None:
        top = scores.amax(-1, keepdim=True)
    d = (top - scores).clamp_(max=len(table) - 1).long()
    return table.index_select(0, d.view(-1)).view(d.shape)


def counts_from_logits(logits: Tensor) -> Tensor:
    """Integer logits [B, V] in 1/LOGIT_STEPS nat -> integer counts summing to count_total(V)."""
    if _fast(logits):
        tab = _exp_table(PRECISION, "cpu").numpy()
        return torch.from_numpy(kernels.counts(_rows(logits), tab, float(count_total(logits.shape[-1])))).view(
            logits.shape)
    top, arg = logits.max(-1, keepdim=True)  # documented: the first largest entry's index
    e = softmax_weights(logits, bits=PRECISION, top=top)  # integers <= 2^24
    return normalize_counts(e, count_total(logits.shape[-1]), arg)


def normalize_counts(e: Tensor, total: int, top: Tensor) -> Tensor:
    """Scale rows of non-negative float64 integers (sum < 2^29 * 2^24) to sum exactly ``total``: each is
    floor(e * total / sum), one correctly rounded division; what rounding leaves (or, where a quotient
    rounded up to an integer, takes) goes to the entry ``top`` [B, 1] of each row, a largest one."""
    s = e.sum(-1, keepdim=True)  # exact: integers
    c = torch.floor(e * total / s)  # e * total < 2^53: exact; then one division
    rest = total - c.sum(-1, keepdim=True)
    return c.scatter_add_(-1, top, rest)
