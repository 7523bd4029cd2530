"""Deterministic float64: the arithmetic of learning while coding (arithmetic versions 2 and 4).

Training needs real-valued sums and products, which float hardware adds in whatever order its
kernels choose. Here every reduction is made exact the way lmzip.arith.exact makes the coder's: its
operands are first quantized to integers (``quant``: a scale per slice, one correctly rounded
division and a round each), so a matrix product or a sum of them is an integer below 2^53 that
float64 holds exactly in any order, blocking, thread count or ISA; the scales multiply back in
afterwards, element by element. What remains are single correctly rounded IEEE operations (+, -,
*, /, sqrt), each its own kernel in the order this code writes them, and ``exp`` by range reduction
and a fixed polynomial of such operations, with an exact table of powers of two. So the same
weights, inputs and code give the same bits everywhere, and encoder and decoder learn alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache

import numpy as np
import torch
from torch import Tensor

from lmzip.arith import exact, kernels
from lmzip.arith.exact import FAST, div, sqrt

MAX_BITS = 24  # at most this many bits per quantized operand (products version 1)
# Products version 2 (arithmetic 4): the left operand of a matrix product in ±2^14, the right in ±2^13,
# so each is two int8 limbs (left: base 256, limbs in ±128; right: base 128, limbs in ±64, which keeps
# the pairwise int16 sums of CPUs without VNNI from saturating, as in exact.Q8) and four int8 GEMMs
# with int32 sums give the exact product 14x faster than one float64 GEMM; any exact method (a
# float64 product of the same integers: |sum| < K 2^27) gives the same integers.
LIMB_BITS = (14, 13)
_PASS = 1 << 22  # outputs per pass of the int8 GEMMs: their four int32 parts stay at 64 MB, not 4 x 84 MB for the head
_PRODUCTS: ContextVar[int] = ContextVar("lmzip learning products", default=1)


@contextmanager
def products(version: int) -> Iterator[None]:
    """Compute every ``dmm`` inside in products version ``version`` (1: 21-bit float64; 2: int8 limbs)."""
    token = _PRODUCTS.set(version)
    try:
        yield
    finally:
        _PRODUCTS.reset(token)


def _bits(n: int) -> int:
    """Operand bits so that n products of two such integers sum below 2^52."""
    return max(8, min(MAX_BITS, (52 - n.bit_length()) // 2))


def _cpu(x: Tensor) -> bool:
    return FAST and x.device.type == "cpu" and x.dtype == torch.float64


def _flat(x: Tensor):
    return x.detach().contiguous().view(-1).numpy()


def quant(x: Tensor, dim: int, bits: int) -> tuple[Tensor, Tensor]:
    """x ~ q * s: integers q in ±2^bits (float64) and a power-of-two-scaled max per slice along ``dim``."""
    dim = dim % x.dim()
    if _cpu(x) and x.dim() == 2 and (x.is_contiguous() or x.t().is_contiguous()):
        if not x.is_contiguous():  # a transposed view: quantize its contiguous transpose the other way
            q, s = quant(x.t(), 1 - dim, bits)
            return q.t(), s.t()
        q, s = (kernels.quant_rows if dim == 1 else kernels.quant_cols)(x.detach().numpy(), 2.0 ** -bits)
        return torch.from_numpy(q), torch.from_numpy(s)
    if _cpu(x) and dim >= x.dim() - 2 and x.dim() >= 2:
        t = x if dim == x.dim() - 1 else x.transpose(-1, -2)
        q, s = kernels.quant_rows(t.contiguous().view(-1, t.shape[-1]).numpy(), 2.0 ** -bits)
        q, s = torch.from_numpy(q).view(t.shape), torch.from_numpy(s).view(*t.shape[:-1], 1)
        return (q, s) if t is x else (q.transpose(-1, -2), s.transpose(-1, -2))
    s = x.abs().amax(dim=dim, keepdim=True) * (2.0 ** -bits)  # exact: a power of two
    s = torch.where(s > 0, s, torch.ones_like(s))
    return torch.round(div(x, s.expand_as(x))), s


def dsum(x: Tensor, dim: int) -> Tensor:
    """A sum along ``dim`` (kept) whose result does not depend on the order: of quantized integers."""
    n = x.shape[dim]
    q, s = quant(x, dim, min(40, 52 - n.bit_length()))
    return q.sum(dim, keepdim=True) * s


def dmm(a: Tensor, b: Tensor) -> Tensor:
    """a [..., M, K] @ b [..., K, N]: a's rows and b's columns quantized, the integer product exact."""
    if _PRODUCTS.get() == 2:
        if _cpu(a) and a.dim() == 2 and exact.limb_gemm(a.shape[-1]):
            return _limb_dmm(a, b)
        qa, sa = quant(a, -1, LIMB_BITS[0])
        qb, sb = quant(b, -2, LIMB_BITS[1])
        acc = torch.matmul(qa, qb)  # exact: the same integers as the limbs give
    else:
        bits = _bits(a.shape[-1])
        qa, sa = quant(a, -1, bits)
        qb, sb = quant(b, -2, bits)
        acc = torch.matmul(qa, qb)
    if _cpu(acc) and acc.dim() == 2:
        return torch.from_numpy(kernels.scale_out(acc.numpy(), sa.contiguous().numpy(), sb.contiguous().numpy()))
    return acc * sa * sb


def by(b: Tensor) -> Callable[[Tensor], Tensor]:
    """``a -> dmm(a, b)`` for many ``a`` against one ``b`` (an LSTM's recurrent weights, step after
    step), with b's quantization done once: the same bits as dmm."""
    if _PRODUCTS.get() == 2 and _cpu(b) and b.dim() == 2 and exact.limb_gemm(b.shape[0]):
        limbs = _right_limbs(b)
        return lambda a: _limb_dmm(a, b, limbs) if _cpu(a) and a.dim() == 2 else dmm(a, b)
    return lambda a: dmm(a, b)


def _right_limbs(b: Tensor) -> tuple[Tensor, Tensor, np.ndarray]:
    bh, bl, sb = _limbs(b.detach(), 0, 2.0 ** -LIMB_BITS[1], 128)  # b's columns
    return bh, bl, sb.reshape(1, -1).copy()


def _limb_dmm(a: Tensor, b: Tensor, right: tuple | None = None) -> Tensor:
    """dmm in products version 2 on the CPU: quant and limbs in one pass per operand, four int8 GEMMs
    with int32 sums, and the limbs' shifts and the scales in one pass (every integer exact)."""
    bh, bl, sb = right or _right_limbs(b)
    M, N = a.shape[0], sb.shape[1]
    out = np.empty((M, N), dtype=np.float64)
    rows = max(1, _PASS // N)  # rows of a per pass: each row's limbs are its own, so passes give the same bits
    for i in range(0, M, rows):
        ah, al, sa = _limbs(a[i : i + rows].detach(), 1, 2.0 ** -LIMB_BITS[0], 256)  # a's rows
        parts = [torch._int_mm(x, y).numpy() for x in (ah, al) for y in (bh, bl)]  # hh, hl, lh, ll
        kernels.limb_out(*parts, sa.reshape(-1, 1), sb, (15, 8, 7), out[i : i + rows])
    return torch.from_numpy(out)


def _limbs(x: Tensor, dim: int, bits_scale: float, base: int) -> tuple[Tensor, Tensor, np.ndarray]:
    """x's int8 limbs (hi, lo; views in x's layout) and scales, per row (dim 1) or column (dim 0),
    read from x or from its contiguous transpose without copying it (the same integers either way)."""
    if not x.is_contiguous() and x.t().is_contiguous():
        hi, lo, s = _limbs(x.t(), 1 - dim, bits_scale, base)
        return hi.t(), lo.t(), s
    if dim == 1:
        hi, lo, s = kernels.quant_limbs(x.contiguous().numpy(), bits_scale, base)
    else:
        hi, lo, s = kernels.quant_limbs_cols(x.contiguous().numpy(), bits_scale, base)
    return torch.from_numpy(hi), torch.from_numpy(lo), s


@cache
def _pow2(device: str) -> Tensor:
    """2^-k for k = 0..1100, exact (Python builds each power of two exactly; 0 past the subnormals)."""
    return torch.tensor([math.ldexp(1.0, -k) for k in range(1101)], dtype=torch.float64, device=device)


LN2, _INV_LN2, _TAYLOR = kernels.LN2, kernels.INV_LN2, kernels.EXP_TAYLOR  # exp(r) on [-ln 2, 0]: error < 1e-16


def dexp(x: Tensor) -> Tensor:
    """exp(x) for x <= 0: x = r - k ln 2 with r in about [-ln 2, 0], a Horner polynomial for exp(r), times 2^-k."""
    if _cpu(x):
        return torch.from_numpy(kernels.each(_flat(x), *_consts(), kernels.EXP)).view(x.shape)
    x = x.clamp(min=-700.0)
    k = torch.floor(-x * _INV_LN2)
    r = x + k * LN2
    p = torch.full_like(r, _TAYLOR[-1])
    for c in reversed(_TAYLOR[:-1]):
        p = p * r + c
    return p * _pow2(str(x.device)).index_select(0, k.long().view(-1)).view(x.shape)


def _consts():
    return (_pow2("cpu").numpy(),)


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x)) from dexp of -|x| (no overflow either side)."""
    if _cpu(x):
        return torch.from_numpy(kernels.each(_flat(x), *_consts(), kernels.SIGMOID)).view(x.shape)
    e = dexp(-x.abs())
    one = torch.ones_like(e)
    return torch.where(x >= 0, div(one, one + e), div(e, one + e))


def tanh(x: Tensor) -> Tensor:
    """2 sigmoid(2x) - 1."""
    if _cpu(x):
        return torch.from_numpy(kernels.each(_flat(x), *_consts(), kernels.TANH)).view(x.shape)
    return sigmoid(x * 2.0) * 2.0 - 1.0


_GELU_C = 0.7978845608028654  # sqrt(2 / pi)
_GELU_A = 0.044715


def gelu(x: Tensor) -> tuple[Tensor, Tensor]:
    """GELU (its tanh form) and its derivative at x."""
    if _cpu(x):
        y, dy = kernels.gelu(_flat(x), _GELU_C, _GELU_A, _GELU_C * 0.5, 3 * _GELU_A, *_consts())
        return torch.from_numpy(y).view(x.shape), torch.from_numpy(dy).view(x.shape)
    x2 = x * x
    t = tanh((x + x * x2 * _GELU_A) * _GELU_C)
    y = x * (t + 1.0) * 0.5
    dy = (t + 1.0) * 0.5 + x * (1.0 - t * t) * (_GELU_C * 0.5) * (x2 * (3 * _GELU_A) + 1.0)
    return y, dy


def softmax(x: Tensor, mask: Tensor | None = None) -> Tensor:
    """Softmax along the last dim; entries where ``mask`` is False get 0."""
    if mask is not None:
        x = torch.where(mask, x, torch.full_like(x, -1e300))
    e = dexp(x - x.amax(-1, keepdim=True))
    return div(e, dsum(e, -1).expand_as(e))


def softmax_grad(x: Tensor, y: Tensor, w: Tensor) -> Tensor:
    """(softmax(x) - onehot(y)) * w[:, None] for logits x [N, V]: the gradient of the w-weighted
    cross-entropy, computed in place over x on the CPU (one pass per row, as softmax's steps)."""
    if _cpu(x) and x.dim() == 2 and x.is_contiguous():
        bits = min(40, 52 - x.shape[-1].bit_length())  # dsum's, along the rows
        kernels.softmax_grad(x.numpy(), y.numpy(), w.contiguous().numpy(), 2.0**-bits, *_consts())
        return x
    g = softmax(x)
    g[torch.arange(len(y)), y] -= 1.0
    return g * w[:, None]


def layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> tuple[Tensor, tuple]:
    """LayerNorm over the last dim (x [N, C]); returns y and what ``layer_norm_back`` needs."""
    inv_c = 1.0 / x.shape[-1]
    xc = x - dsum(x, -1) * inv_c
    rstd = div(torch.ones_like(xc[:, :1]), sqrt(dsum(xc * xc, -1) * inv_c + eps))
    xhat = xc * rstd
    return xhat * gamma + beta, (xhat, rstd, gamma)


def layer_norm_back(gy: Tensor, saved: tuple) -> tuple[Tensor, Tensor, Tensor]:
    """Gradients of layer_norm: (dx, dgamma, dbeta)."""
    xhat, rstd, gamma = saved
    inv_c = 1.0 / xhat.shape[-1]
    g = gy * gamma
    gx = (g - dsum(g, -1) * inv_c - xhat * (dsum(g * xhat, -1) * inv_c)) * rstd
    return gx, dsum(gy * xhat, 0)[0], dsum(gy, 0)[0]


def linear_back(gy: Tensor, x: Tensor, w: Tensor) -> tuple[Tensor, Tensor]:
    """y = x w^T: (dx, dw) for x [N, in], w [out, in], gy [N, out]."""
    return dmm(gy, w), dmm(gy.t(), x)


def embedding_back(idx: Tensor, gy: Tensor, rows: int) -> Tensor:
    """The gradient of a table lookup: each row's gradients added where its index points, exactly."""
    q, s = quant(gy, 0, _bits(max(2, idx.numel())) * 2 - 1)  # one integer per term: sums below 2^52
    out = torch.zeros(rows, gy.shape[1], dtype=gy.dtype, device=gy.device)
    return out.index_add_(0, idx.view(-1), q) * s
