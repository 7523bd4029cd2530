"""The benchmark on 1, 2, … local Ray workers: wall time, speed-up and efficiency (issue: past one machine).

    python benchmarks/ray_scaling.py --workers 1,2 --compressors xz,ppmd-o8,cm,lstm-wide

Every compressor × file of the default suite (the first --limit bytes of each) is one Ray task on a
local instance offering that many CPUs; every row is verified as in `lmzip bench`. Writes
benchmarks/results/ray-scaling.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from lmzip.bench import cluster
from lmzip.bench import runner as bench

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--compressors", default="xz,ppmd-o8,cm,lstm-wide")
    ap.add_argument("--limit", type=int, default=200_000)
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/ray-scaling"))
    args = ap.parse_args()
    names = args.compressors.split(",")
    sources = bench.corpus_sources(bench.bundled_corpus(), bench.DEFAULT_FILES, args.limit)
    rows = []
    for n in map(int, args.workers.split(",")):
        t0 = time.perf_counter()
        got = cluster.run(names, sources, cluster.LOCAL, cpus=n)
        wall = time.perf_counter() - t0
        ok = sum(r["verified"] for r in got)
        rows.append({"workers": n, "wall_s": round(wall, 1), "tasks": len(got), "verified": ok})
        print(json.dumps(rows[-1]), flush=True)
    base = rows[0]["wall_s"] * rows[0]["workers"]
    for r in rows:
        r["speedup"] = round(rows[0]["wall_s"] / r["wall_s"], 2)
        r["efficiency"] = round(base / (r["wall_s"] * r["workers"]), 2)
    out = Path(args.out)
    meta = {"compressors": names, "files": len(sources), "limit": args.limit, "cores": os.cpu_count()}
    out.with_suffix(".json").write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")
    lines = [f"`lmzip bench` as Ray tasks on a local instance of N CPUs ({os.cpu_count()} cores here): "
             f"{', '.join(names)} × the {len(sources)} default files (first {args.limit:,} bytes each), "
             "every row verified; wall time includes starting Ray (`python benchmarks/ray_scaling.py`).", "",
             "| workers | wall s | tasks verified | speed-up | efficiency |", "|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['workers']} | {r['wall_s']} | {r['verified']}/{r['tasks']} | {r['speedup']} | {r['efficiency']} |"
              for r in rows]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
