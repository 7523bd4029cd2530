"""Compiled CPU kernels for the exact arithmetic's element-wise steps (numba, one pass each).

Each kernel performs the very IEEE operations of its reference in lmzip.arith.exact, in the same order
(numba compiles without fast-math, so LLVM neither fuses a multiply and an add nor reorders a sum),
so it returns the same bits; tests/arith/test_kernels.py compares every kernel with its reference. The
references run wherever these cannot (a GPU, or no numba).
"""

from __future__ import annotations

import math

import numpy as np

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba is a dependency; the torch references still work
    njit = None

AVAILABLE = njit is not None


def _jit(f):
    return njit(cache=True, nogil=True)(f) if AVAILABLE else f


def _jit_exact_sums(f):
    """For loops that only add and multiply integers whose every partial result stays below 2^53:
    there reassociation and fused multiply-adds cannot change a bit, so LLVM may vectorize them."""
    return njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})(f) if AVAILABLE else f


def _jit_any_order(f):
    """For the largest of finite floats (max is exact in any order) and sums of integers below 2^53:
    LLVM may vectorize them."""
    return njit(cache=True, nogil=True, fastmath={"reassoc", "contract", "nnan", "ninf"})(f) if AVAILABLE else f


@_jit_any_order
def _top(row):
    """The largest entry of a row of finite floats."""
    m = row[0]
    for v in range(row.shape[0]):
        m = max(m, row[v])
    return m


@_jit_any_order
def _top_abs(row):
    """The largest magnitude in a row of finite floats (0 for a row of zeros)."""
    m = 0.0
    for v in range(row.shape[0]):
        m = max(m, abs(row[v]))
    return m


@_jit_any_order
def _centred(x, C, d):
    """d = C*x - sum(x) for a row of integers (exact below 2^53), and the largest |d|."""
    s = 0.0
    for k in range(x.shape[0]):
        s += x[k]
    m = 0.0
    for k in range(x.shape[0]):
        v = C * x[k] - s
        d[k] = v
        m = max(m, abs(v))
    return m


@_jit_any_order
def _quantized(d, inv, q):
    """q = rint(d * inv) (each a product, then rounded to an integer), and the integers' sum and sum of squares."""
    a1 = 0.0
    a2 = 0.0
    for k in range(d.shape[0]):
        v = np.rint(d[k] * inv)
        q[k] = v
        a1 += v
        a2 += v * v
    return a1, a2


@_jit
def quantize_rows(x, act, q):
    """Per row: q = rint(x * (act / max|x|)) (written into ``q``: float32, or int8 for |act| <= 127) and
    max|x| (float64), as exact.quantize_rows; returns q and max|x|. (The caller allocates q: a dtype
    class as an argument sends every call through numba's slow typing path, ~20 us.)"""
    R, K = x.shape
    m = np.empty((R, 1), dtype=np.float64)
    for r in range(R):
        top = _top_abs(x[r])
        m[r, 0] = top
        inv = act / (top if top > 0 else 1.0)
        for k in range(K):
            q[r, k] = np.rint(x[r, k] * inv)
    return q, m


@_jit
def norm_rows(x, act, q):
    """The prologue of exact.QNormLinear: q (written into ``q``, as quantize_rows) of C*x - sum(x), and
    sum(q), and sqrt of C*sum(q^2) - sum(q)^2."""
    R, C = x.shape
    s1 = np.empty((R, 1), dtype=np.float64)
    std = np.empty((R, 1), dtype=np.float64)
    d = np.empty(C, dtype=np.float64)
    v = np.empty(C, dtype=np.float64)
    for r in range(R):
        top = _centred(x[r], float(C), d)
        a1, a2 = _quantized(d, act / (top if top > 0 else 1.0), v)
        for k in range(C):
            q[r, k] = v[k]
        s1[r, 0] = a1
        var = C * a2 - a1 * a1
        std[r, 0] = np.sqrt(var if var > 0 else 1.0)
    return q, s1, std


@_jit
def linear_out(acc, m, coef, bias, has_bias):
    """The epilogue of exact.QLinear: rint(acc * m * coef) (+ bias)."""
    R, N = acc.shape
    y = np.empty((R, N), dtype=np.float64)
    for r in range(R):
        mr = m[r, 0]
        for n in range(N):
            v = np.rint(acc[r, n] * mr * coef[n])
            y[r, n] = v + bias[n] if has_bias else v
    return y


@_jit
def norm_out(acc, C, s1, rowsum, scale, std, out, bias):
    """The epilogue of exact.QNormLinear: rint((C*acc - s1*rowsum) * scale / std * out) + bias."""
    R, N = acc.shape
    y = np.empty((R, N), dtype=np.float64)
    for r in range(R):
        a, sd = s1[r, 0], std[r, 0]
        for n in range(N):
            v = C * acc[r, n] - a * rowsum[n]
            y[r, n] = np.rint(v * scale[n] / sd * out) + bias[n]
    return y


@_jit
def table(x, tab, n, shift, identity_above):
    """exact.apply_table: tab[clamp(rint(x / 2^shift), -n, n) + n]; x itself above the range if asked."""
    R, K = x.shape
    y = np.empty((R, K), dtype=np.float64)
    inv = 1.0 / float(1 << shift)  # a power of two: multiplying by it is the division, exactly
    hi = float(n << shift)
    for r in range(R):
        for k in range(K):
            v = x[r, k]
            i = np.rint(v * inv)
            if i > n:
                i = n
            elif i < -n:
                i = -n
            o = tab[int(i) + n]
            if identity_above and v >= hi:
                o = v
            y[r, k] = o
    return y


@_jit_exact_sums
def _sum(x):
    """The sum of a row of integers (below 2^53 in total): any order gives it exactly."""
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


@_jit_exact_sums
def _exp_row(row, top, exp_tab, e):
    """e[v] = exp_tab[min(top - row[v], last)], a lookup per entry, and their sum (integers: exact)."""
    last = len(exp_tab) - 1
    s = 0.0
    for v in range(row.shape[0]):
        d = top - row[v]
        x = exp_tab[int(d) if d < last else last]
        e[v] = x
        s += x
    return s


@_jit_exact_sums
def _floor_div(e, total, s, c):
    """c[v] = floor(e[v] * total / s), a product and a division per entry, each correctly rounded (reassoc
    reaches only the sum of the integers c, which it returns)."""
    t = 0.0
    for v in range(e.shape[0]):
        x = np.floor(e[v] * total / s)
        c[v] = x
        t += x
    return t


@_jit
def counts(logits, exp_tab, total):
    """exact.counts_from_logits, straight to the coder's float32 rows (counts below 2^24: exact)."""
    R, V = logits.shape
    out = np.empty((R, V), dtype=np.float32)
    e = np.empty(V, dtype=np.float64)
    c = np.empty(V, dtype=np.float64)
    for r in range(R):
        row = logits[r]
        top = _top(row)
        arg = 0  # the first largest entry, as torch.max documents
        while row[arg] != top:
            arg += 1
        rest = total - _floor_div(e, total, _exp_row(row, top, exp_tab, e), c)
        for v in range(V):
            out[r, v] = c[v]
        out[r, arg] = c[arg] + rest
    return out


@_jit
def lstm_cell(gates, c, sig, tanh, n, shift, one):
    """The exact LSTM cell: gates [B, 4H] (i, f, g, o) and c [B, H] -> new h and c (exact.apply_table's
    lookups, then c = rint((f*c + i*g) / one) and h = rint(o * tanh(c) / one))."""
    B, H4 = gates.shape
    H = H4 // 4
    h_out = np.empty((B, H), dtype=np.float64)
    c_out = np.empty((B, H), dtype=np.float64)
    inv = 1.0 / float(1 << shift)  # powers of two: multiplying by the inverse is the division, exactly
    inv_one = 1.0 / one
    for b in range(B):
        for j in range(H):
            gi = _look(gates[b, j], sig, n, inv)
            gf = _look(gates[b, H + j], sig, n, inv)
            gg = _look(gates[b, 2 * H + j], tanh, n, inv)
            go = _look(gates[b, 3 * H + j], sig, n, inv)
            cn = np.rint((gf * c[b, j] + gi * gg) * inv_one)
            c_out[b, j] = cn
            h_out[b, j] = np.rint(go * _look(cn, tanh, n, inv) * inv_one)
    return h_out, c_out


@_jit
def _look(v, tab, n, inv):
    i = np.rint(v * inv)
    if i > n:
        i = n
    elif i < -n:
        i = -n
    return tab[int(i) + n]


@_jit_exact_sums
def _sums(a, m, b, h, R, K, out):
    """out[g, r] = sum_i a[g, i] * m[b, h, r, i] over i < K, for r < R: the scores (a: the queries, m: the
    keys [W, hd]) and the weighted values (a: the weights, m: the values [hd, W]) of attention. Integers:
    |q|, |k|, |v| <= 2^20, weights <= 2^16, at most 2^10 terms, so every partial sum stays below 2^53.
    Three query heads per key head (the shipped models') take four rows at a time, each element of m
    converted once for the three."""
    G = a.shape[0]
    r = 0
    if G == 3:
        while r + 4 <= R:
            s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = s20 = s21 = s22 = s23 = 0.0
            for i in range(K):
                x0, x1 = np.float64(m[b, h, r, i]), np.float64(m[b, h, r + 1, i])
                x2, x3 = np.float64(m[b, h, r + 2, i]), np.float64(m[b, h, r + 3, i])
                a0, a1, a2 = a[0, i], a[1, i], a[2, i]
                s00 += a0 * x0
                s01 += a0 * x1
                s02 += a0 * x2
                s03 += a0 * x3
                s10 += a1 * x0
                s11 += a1 * x1
                s12 += a1 * x2
                s13 += a1 * x3
                s20 += a2 * x0
                s21 += a2 * x1
                s22 += a2 * x2
                s23 += a2 * x3
            out[0, r], out[0, r + 1], out[0, r + 2], out[0, r + 3] = s00, s01, s02, s03
            out[1, r], out[1, r + 1], out[1, r + 2], out[1, r + 3] = s10, s11, s12, s13
            out[2, r], out[2, r + 1], out[2, r + 2], out[2, r + 3] = s20, s21, s22, s23
            r += 4
    for rest in range(r, R):
        for g in range(G):
            acc = 0.0
            for i in range(K):
                acc += a[g, i] * np.float64(m[b, h, rest, i])
            out[g, rest] = acc


@_jit
def _rounded(x, div, lim):
    """rint(x / div) clamped to [-lim, lim], as torch.round(x / div).clamp(-lim, lim)."""
    return min(max(np.rint(x / div), -lim), lim)


@_jit
def cache_qkv(y, H, Hkv, cos, sin, p0, div_qk, div_v, lim, k_cache, v_cache, narrow):
    """qmodel.ExactGPT's cache step in one pass over the qkv product y [B, T, (H + 2 Hkv) hd]:
    the keys rotated (x1 cos - x2 sin, x1 sin + x2 cos; exact below 2^53) and the values written
    into the caches (keys [B, Hkv, W, hd], values [B, Hkv, hd, W]) at positions p0.., each rint(x / div)
    clamped to +-lim, and the queries rotated alike returned as [B, H, T, hd]; and whether every key and
    value fit the caches
    (|x| <= narrow: an int16 cache's bound; where one did not, what was written is to be written again)."""
    B, T, N = y.shape
    hd = N // (H + 2 * Hkv)
    half = hd // 2
    q = np.empty((B, H, T, hd), dtype=np.float64)
    for b in range(B):
        for t in range(T):
            p = p0 + t
            for h in range(H + Hkv):  # the query heads, then the key heads
                at = h * hd
                for d in range(half):
                    x1, x2, c, s = y[b, t, at + d], y[b, t, at + half + d], cos[p, d], sin[p, d]
                    lo = _rounded(x1 * c - x2 * s, div_qk, lim)
                    hi = _rounded(x1 * s + x2 * c, div_qk, lim)
                    if h < H:
                        q[b, h, t, d], q[b, h, t, half + d] = lo, hi
                    elif abs(lo) > narrow or abs(hi) > narrow:
                        return q, False
                    else:
                        k_cache[b, h - H, p, d], k_cache[b, h - H, p, half + d] = lo, hi
            for h in range(Hkv):
                at = (H + Hkv + h) * hd
                for d in range(hd):
                    x = _rounded(y[b, t, at + d], div_v, lim)
                    if abs(x) > narrow:
                        return q, False
                    v_cache[b, h, d, p] = x
    return q, True


@_jit
def attend_causal(q, k, v, p0, scale, exp_tab):
    """Attention of T new positions p0.. (q [B, Hkv, G, T, hd]), each over the cached positions up to
    its own (keys [B, Hkv, W, hd], values [B, Hkv, hd, W], integers in int16, float32 or float64): the
    reference's masked pass (masked weights are 0, so the sums are the same integers)."""
    B, Hkv, G, T, hd = q.shape
    out = np.empty((B, Hkv, G, T, hd), dtype=np.float64)
    L = p0 + T
    s = np.empty((G, L), dtype=np.float64)
    w = np.empty((G, L), dtype=np.float64)
    num = np.empty((G, hd), dtype=np.float64)
    qq = np.empty((G, hd), dtype=np.float64)
    den = np.empty(G, dtype=np.float64)
    for b in range(B):
        for h in range(Hkv):
            for p in range(T):
                n = p0 + p + 1
                for g in range(G):
                    for d in range(hd):
                        qq[g, d] = q[b, h, g, p, d]
                _sums(qq, k, b, h, n, hd, s)
                for g in range(G):
                    den[g] = _weights(s[g], n, scale, exp_tab, w[g])
                _sums(w, v, b, h, hd, n, num)
                for g in range(G):
                    for d in range(hd):
                        out[b, h, g, p, d] = np.rint(num[g, d] / den[g])
    return out


@_jit_any_order
def _weights(s, n, scale, exp_tab, w):
    """One head's attention weights over n positions: the scores s rint(s * scale) in place, then
    w = exp_tab[min(top - s, last)]; returns their sum (integers below 2^53: exact in any order)."""
    last = len(exp_tab) - 1
    top = -1e300
    for t in range(n):
        a = np.rint(s[t] * scale)
        s[t] = a
        top = max(top, a)
    den = 0.0
    for t in range(n):
        diff = top - s[t]
        x = exp_tab[int(diff) if diff < last else last]
        w[t] = x
        den += x
    return den


# ---------------------------------------------------------------------------- learning (lmzip.arith.detfloat)

# exp(r) on [-ln 2, 0] by its Taylor polynomial of degree 13 (error below 1e-16), evaluated by Horner
EXP_TAYLOR = tuple(1.0 / math.factorial(i) for i in range(14))
C0, C1, C2, C3, C4, C5, C6, C7, C8, C9, C10, C11, C12, C13 = EXP_TAYLOR
LN2 = 0.6931471805599453
INV_LN2 = 1.4426950408889634


@_jit
def _exp1(v, pow2):
    """exp(v), v <= 0, as detfloat.dexp: v = r - k ln 2, Horner from the highest term, times 2^-k."""
    v = max(v, -700.0)
    k = np.floor(-v * INV_LN2)
    r = v + k * LN2
    p = ((((((((((((C13 * r + C12) * r + C11) * r + C10) * r + C9) * r + C8) * r + C7) * r + C6) * r + C5) * r
                + C4) * r + C3) * r + C2) * r + C1) * r + C0
    return p * pow2[int(k)]




@_jit
def _row_scale(row, bits_scale):
    """max|row| * 2^-bits (an exact power-of-two scaling), or 1 for a row of zeros."""
    top = 0.0
    for k in range(row.shape[0]):
        top = max(top, abs(row[k]))
    sc = top * bits_scale
    return sc if sc > 0 else 1.0


@_jit
def quant_rows(x, bits_scale):
    """Per row: s = max|x| * 2^-bits (1 where 0) and q = rint(x / s), as detfloat.quant along the last dim."""
    R, K = x.shape
    q = np.empty((R, K), dtype=np.float64)
    s = np.empty((R, 1), dtype=np.float64)
    for r in range(R):
        sc = _row_scale(x[r], bits_scale)
        s[r, 0] = sc
        for k in range(K):
            q[r, k] = np.rint(x[r, k] / sc)
    return q, s


@_jit
def quant_limbs(x, bits_scale, base):
    """quant_rows, each q then split into int8 limbs hi * base + lo with lo in [-base/2, base/2)."""
    R, K = x.shape
    hi = np.empty((R, K), dtype=np.int8)
    lo = np.empty((R, K), dtype=np.int8)
    s = np.empty((R, 1), dtype=np.float64)
    for r in range(R):
        sc = _row_scale(x[r], bits_scale)
        s[r, 0] = sc
        for k in range(K):
            hi[r, k], lo[r, k] = _limbs(np.rint(x[r, k] / sc), base)
    return hi, lo, s


@_jit
def _limbs(q, base):
    """The integer q as hi * base + lo with lo in [-base/2, base/2) (base a power of two: exact)."""
    h = np.floor((q + float(base // 2)) * (1.0 / float(base)))
    return h, q - h * float(base)  # exact: integers below 2^53


@_jit
def _col_scales(x, bits_scale):
    """_row_scale of every column of x [R, K], reading x row by row."""
    R, K = x.shape
    top = np.zeros(K, dtype=np.float64)
    for r in range(R):
        for k in range(K):
            top[k] = max(top[k], abs(x[r, k]))
    s = np.empty((1, K), dtype=np.float64)
    for k in range(K):
        sc = top[k] * bits_scale
        s[0, k] = sc if sc > 0 else 1.0
    return s


@_jit
def quant_cols(x, bits_scale):
    """quant_rows of x's columns without transposing x: q [R, K] in x's layout and s [1, K]."""
    R, K = x.shape
    s = _col_scales(x, bits_scale)
    q = np.empty((R, K), dtype=np.float64)
    for r in range(R):
        for k in range(K):
            q[r, k] = np.rint(x[r, k] / s[0, k])
    return q, s


@_jit
def quant_limbs_cols(x, bits_scale, base):
    """quant_limbs of x's columns without transposing x: limbs [R, K] in x's layout and s [1, K]."""
    R, K = x.shape
    s = _col_scales(x, bits_scale)
    hi = np.empty((R, K), dtype=np.int8)
    lo = np.empty((R, K), dtype=np.int8)
    for r in range(R):
        for k in range(K):
            hi[r, k], lo[r, k] = _limbs(np.rint(x[r, k] / s[0, k]), base)
    return hi, lo, s


@_jit
def softmax_grad(x, y, w, bits_scale, pow2):
    """In place, row by row: x [N, V] logits -> (softmax(x) - onehot(y)) * w, as learn._head_grads
    computes it through detfloat.softmax (max, dexp, dsum of quantized integers, one division each)."""
    N, V = x.shape
    for r in range(N):
        row = x[r]
        m = row[0]
        for k in range(1, V):
            m = max(m, row[k])
        for k in range(V):
            row[k] = _exp1(row[k] - m, pow2)
        sc = _row_scale(row, bits_scale)
        total = 0.0
        for k in range(V):
            total += np.rint(row[k] / sc)  # integers: the sum is exact in any order
        total = total * sc
        for k in range(V):
            row[k] = row[k] / total
        row[y[r]] = row[y[r]] - 1.0
        for k in range(V):
            row[k] = row[k] * w[r]
    return x


@_jit
def limb_out(hh, hl, lh, ll, sa, sb, shifts, out):
    """out = (hh << s0) + (hl << s1) + (lh << s2) + ll in int64, then as float64 times sa[m] times sb[n]."""
    M, N = hh.shape
    s0, s1, s2 = shifts
    for m in range(M):
        for n in range(N):
            acc = (np.int64(hh[m, n]) << s0) + (np.int64(hl[m, n]) << s1) + (np.int64(lh[m, n]) << s2) + ll[m, n]
            out[m, n] = np.float64(acc) * sa[m, 0] * sb[0, n]
    return out


@_jit
def _sigmoid1(z, pow2):
    e = _exp1(-abs(z), pow2)
    return 1.0 / (1.0 + e) if z >= 0 else e / (1.0 + e)


EXP, SIGMOID, TANH = 0, 1, 2  # the functions ``each`` applies


@_jit
def each(x, pow2, kind):
    """detfloat's dexp (``kind`` EXP), sigmoid or tanh (2 sigmoid(2x) - 1) element by element."""
    out = np.empty_like(x)
    for i in range(x.size):
        if kind == EXP:
            out[i] = _exp1(x[i], pow2)
        elif kind == SIGMOID:
            out[i] = _sigmoid1(x[i], pow2)
        else:
            out[i] = _sigmoid1(x[i] * 2.0, pow2) * 2.0 - 1.0
    return out


@_jit
def gelu(x, c, a, c_half, a3, pow2):
    """detfloat.gelu element by element: the tanh form and its derivative."""
    y = np.empty_like(x)
    dy = np.empty_like(x)
    for i in range(x.size):
        v = x[i]
        v2 = v * v
        t = _sigmoid1(((v + v * v2 * a) * c) * 2.0, pow2) * 2.0 - 1.0
        y[i] = v * (t + 1.0) * 0.5
        dy[i] = (t + 1.0) * 0.5 + v * (1.0 - t * t) * c_half * (v2 * a3 + 1.0)
    return y, dy


@_jit
def scale_out(acc, sa, sb):
    """acc * sa * sb for acc [M, N], sa [M, 1], sb [1, N]: detfloat.dmm's scales, in place."""
    M, N = acc.shape
    for m in range(M):
        for n in range(N):
            acc[m, n] = acc[m, n] * sa[m, 0] * sb[0, n]
    return acc
