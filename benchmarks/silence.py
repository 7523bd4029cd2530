"""What each hashed model of counting adds to one file: the file's payload with every input, then with one model's
inputs silenced at a time (its table's room still taken: a lower bound on what dropping it saves in bytes).

    .venv/bin/python benchmarks/silence.py ../shared/corpora/bench/canterbury_large/world192.txt --level 9 --rows 60,61
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--level", type=int, default=9, help="counting level (from 7 on the newest cm version)")
    ap.add_argument("--rows", default="", help="hashed models to silence one at a time (rows of the table: "
                    "lmzip.cm.body's list, less 2), comma-separated, or 'all'")
    ap.add_argument("--head", type=int, default=0, help="code only the file's first HEAD bytes (0: all of it)")
    args = ap.parse_args()
    from lmzip.cm import model

    data = Path(args.file).read_bytes()
    data = data[:args.head] if args.head else data
    src = np.frombuffer(data, dtype=np.uint8)
    every = range(model.allocate(args.level, None, 1).ht.shape[0])
    rows = list(every) if args.rows == "all" else [int(r) for r in args.rows.split(",") if r]
    base = 0
    print(f"{Path(args.file).name}, {len(data):,} bytes, cm level {args.level}")
    for k in [None, *rows]:
        t0 = time.perf_counter()
        size = len(model.run(True, src, len(data), model.allocate(args.level, None, len(data)),
                             silence=() if k is None else (k,)))
        what = "every input" if k is None else f"- hashed model {k}"
        base = size if k is None else base
        extra = "" if k is None else f" ({size - base:+,})"
        print(f"{what}: {size:,} bytes{extra}, {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
