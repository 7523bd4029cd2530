"""The mixers' training step (lmzip.cm.parts.mix_train) against the same step in 64-bit lanes, per call of 215
inputs (cm version 24's first layer), in one compiled loop; run it again with numba's code for an AVX2-only CPU
(``NUMBA_CPU_NAME=haswell`` and ``NUMBA_CPU_FEATURES`` without AVX-512) for the other CPU class.

    .venv/bin/python benchmarks/mixer_step.py [--label native] [--out benchmarks/results/mixer-step.md]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
from numba import njit

from lmzip.cm.parts import mix_train

N, CALLS = 215, 2_000_000


@njit(cache=False)
def train64(w, ws, x, n, err, skip):
    """The step as defined, in 64-bit lanes (what mix_train computed before)."""
    if -skip < err < skip:
        return
    e = np.int32(err)
    for i in range(n):
        v = w[ws, i] + ((np.int64(x[i]) * e) >> 16)
        w[ws, i] = max(min(v, 0x3FFFFFFF), -0x3FFFFFFF)


@njit(cache=False)
def _calls(which, w, x, reps):
    for r in range(reps):
        err = 100000 + (r & 1023) * 7
        if which == 0:
            train64(w, r & 3, x, N, err, 0)
        else:
            mix_train(w, r & 3, x, N, err, 0)


def _cpu() -> str:
    """The CPU's model name (and whether it has AVX-512 VNNI)."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    name = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")),
                platform.machine())
    return name + (", AVX-512 VNNI" if "avx512_vnni" in info else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default="native", help="what code numba made (native, haswell)")
    ap.add_argument("--out", default=None, help="append a row to this markdown file")
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    x = rng.integers(-2047, 2048, size=N).astype(np.int32)
    row = []
    for which in (0, 1):
        w = rng.integers(-(1 << 29), 1 << 29, size=(4, N)).astype(np.int32)
        _calls(which, w, x, 10)
        t = time.perf_counter()
        _calls(which, w, x, CALLS)
        row.append((time.perf_counter() - t) / CALLS * 1e9)
    line = f"| {args.label} | {_cpu()} | {row[0]:.1f} | {row[1]:.1f} |"
    print(line)
    if args.out:
        out = Path(args.out)
        if not out.exists():
            out.write_text("The mixers' training step, ns per call of 215 inputs (benchmarks/mixer_step.py), one "
                           "thread.\n\n| numba's code | CPU | 64-bit lanes | mix_train (32-bit lanes) |\n"
                           "|---|---|---:|---:|\n")
        with out.open("a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
