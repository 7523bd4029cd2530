"""The exact matrix products of rule 1 (lmzip.arith.exact) and the kernel that computes them here.

Three kernels give the same integers, so which one runs changes speed, never a byte:
  float32  the float32 product of the integer operands (MKL's SGEMM), in chunks whose sums stay below
           2^24; every CPU and GPU, and arithmetic 1's 9-bit activations;
  int_mm   torch._int_mm, int8 operands and int32 sums: oneDNN's VNNI/AMX kernels. On a CPU without
           VNNI torch takes a slow generic loop instead (up to 60x below float32);
  onednn   oneDNN's int8 inner product (torch.ops.onednn.qlinear_pointwise): the activations as u8
           with zero point 128, float32 output (the int32 sums, exact below 2^24). Without VNNI it
           adds pairs of u8 x s8 products in int16 (vpmaddubsw), which arithmetic 3's 7-bit weights
           keep from saturating; about twice the float32 product's speed on an AVX2 CPU.
A probe of a few milliseconds at import times each kernel that multiplies correctly (every operand at
its bound, both signs) and keeps the fastest; torch._int_mm is left untimed where the CPU's flags show no
int8 dot-product instructions, and a kernel already three times slower than the best is timed once.
LMZIP_INT8_GEMM=off|on|auto|int_mm|onednn overrides it ("on": the fastest int8 kernel that works).
"""

from __future__ import annotations

import os
import time

import numpy as np
import torch
from torch import Tensor

FLOAT32, INT_MM, ONEDNN = "float32", "int_mm", "onednn"
INT8_KERNELS = (INT_MM, ONEDNN)
INT8_MIN_K = 8  # torch 2.13's _int_mm returns wrong sums for K = 1 (tests/arith); short products are cheap anyway
PROBE_SHAPE = (128, 384, 1536)  # rows x terms x outputs: a batch through the default model's MLP, ~75M MACs
ROW_STEP = 16  # oneDNN builds a kernel per row count: larger products are padded to a multiple of this


def int_matmul(q: Tensor, w: Tensor, chunk: int, exact32: bool = False) -> Tensor:
    """q [..., K] times w [N, K] transposed, both integer-valued float32, in float32 products of at most
    ``chunk`` terms: exact, as float64 [..., N] (or, with ``exact32`` and one chunk, as the float32 that
    already holds it exactly)."""
    K = q.shape[-1]
    if K <= chunk:
        out = torch.nn.functional.linear(q, w)
        return out if exact32 else out.double()
    out = None
    for a in range(0, K, chunk):
        part = torch.nn.functional.linear(q[..., a : a + chunk], w[:, a : a + chunk]).double()
        out = part if out is None else out + part
    return out


class Int8Weights:
    """One weight matrix [N, K] (integers in ±63) in the form an int8 kernel multiplies with."""

    def __init__(self, kernel: str, w8: Tensor):
        self.kernel, self.n = kernel, w8.shape[0]
        if kernel == INT_MM:
            self.w8 = w8.T.contiguous()  # [K, N]
        else:
            self.w8 = torch.ops.onednn.qlinear_prepack(w8, None)
            self.ones, self.zeros = torch.ones(self.n), torch.zeros(self.n, dtype=torch.int64)

    def times(self, q: np.ndarray) -> np.ndarray:
        """q [M, K] int8 times the weights transposed: the exact sums (int32, or float32 holding them)."""
        if self.kernel == INT_MM:
            return torch._int_mm(torch.from_numpy(q), self.w8).numpy()
        M, K = q.shape
        rows = M if M <= ROW_STEP else -(-M // ROW_STEP) * ROW_STEP
        u = np.full((rows, K), 128, dtype=np.uint8)  # padding rows: zeros
        np.bitwise_xor(q.view(np.uint8), np.uint8(0x80), out=u[:M])  # x + 128 in two's complement
        out = torch.ops.onednn.qlinear_pointwise(torch.from_numpy(u), 1.0, 128, self.w8, self.ones, self.zeros, None,
                                                 1.0, 0, torch.float32, "none", [], "")
        return out.numpy()[:M]


def works(kernel: str) -> bool:
    """Whether ``kernel`` multiplies int8 matrices exactly here (private APIs: check, never assume): every
    operand at its bound, both signs, alternating (a pair that saturated in int16 would show)."""
    try:
        for K in (INT8_MIN_K, 40, 1000):
            q = torch.full((4, K), 127, dtype=torch.int8)
            q[1], q[2, ::2], q[3] = -127, -127, 0
            w = torch.full((3, K), 63, dtype=torch.int8)
            w[1], w[2, 1::2] = -63, -63
            got = Int8Weights(kernel, w).times(q.numpy())
            if not np.array_equal(np.asarray(got, dtype=np.float64), (q.double() @ w.double().T).numpy()):
                return False
        return True
    except Exception:  # noqa: BLE001 - any failure means: not this kernel
        return False


def _best_time(f, reps: int = 3, beaten: float = float("inf")) -> float:
    """The best of ``reps`` timed calls after one that builds the kernel; one timed call only where it
    is already three times ``beaten`` (another kernel's time: this one has lost, no need to be sure)."""
    f()  # the first call builds the kernel
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
        if best > 3 * beaten:
            break
    return best


def lacks_vnni() -> bool:
    """Whether the CPU's flags say it has no int8 dot-product instructions (AVX-512 VNNI, AVX-VNNI, AMX),
    where torch._int_mm takes a generic loop (0.06 s for the probe's product on an AVX2 EPYC, against
    0.003 s for float32); False where the flags cannot be read (then the probe times it)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((ln.split(":", 1)[1].split() for ln in f if ln.startswith("flags")), None)
    except OSError:
        return False
    return flags is not None and not {"avx512_vnni", "avx_vnni", "amx_int8"} & set(flags)


def probe_time(kernel: str, beaten: float = float("inf")) -> float:
    """Seconds one PROBE_SHAPE product takes with ``kernel`` (the best of three; see ``_best_time``)."""
    m, k, n = PROBE_SHAPE
    if kernel == FLOAT32:
        a32, w32 = torch.ones((m, k)), torch.ones((n, k))
        return _best_time(lambda: torch.nn.functional.linear(a32, w32), beaten=beaten)
    weights, q = Int8Weights(kernel, torch.ones((n, k), dtype=torch.int8)), np.ones((m, k), dtype=np.int8)
    return _best_time(lambda: weights.times(q), beaten=beaten)


def timings(enabled: bool = True) -> dict[str, float]:
    """The kernels that may compute arithmetic 3's products here, each with its probe time (one alone:
    not timed). The environment's LMZIP_INT8_GEMM may narrow them; float32 alone where no int8 kernel
    works or ``enabled`` is false."""
    want = os.environ.get("LMZIP_INT8_GEMM", "auto").lower()
    if not enabled or want in ("0", "off", "no"):
        return {FLOAT32: 0.0}
    pool = [k for k in INT8_KERNELS if want in ("auto", "1", "on", "yes", k)
            and not (k == INT_MM and want == "auto" and lacks_vnni())  # its generic loop: not worth timing
            and works(k)]
    if want == "auto" or not pool:
        pool.insert(0, FLOAT32)  # first: the time the others must beat
    if len(pool) == 1:
        return {pool[0]: 0.0}
    times: dict[str, float] = {}
    for k in pool:
        times[k] = probe_time(k, min(times.values(), default=float("inf")))
    return times


def choose(enabled: bool = True) -> str:
    """The fastest of ``timings``: the kernel of arithmetic 3's products on this CPU."""
    times = timings(enabled)
    return min(times, key=times.__getitem__)
