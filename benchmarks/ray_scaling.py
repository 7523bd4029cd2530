"""The benchmark on 1, 2, … local Ray workers: wall time, speed-up and efficiency (issue: past one machine).

    python benchmarks/ray_scaling.py --workers 1,2 --nodes 2 --compressors xz,ppmd-o8,cm,lstm-wide

Every compressor × file of the default suite (the first --limit bytes of each) is compressed in one Ray
task and decompressed in another (as `lmzip bench --ray`), on a local instance offering that many CPUs,
then (--nodes) on a cluster of that many nodes of one CPU each on loopback, a head and the others joined
to it (`ray start`: lmzip.bench.loopback, as the tests' cluster), where every row is decompressed on another
node than it was compressed on. Every row is verified. Writes benchmarks/results/ray-scaling.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from common import RESULTS, write_json, write_md

from lmzip.bench import cluster
from lmzip.bench import runner as bench
from lmzip.bench.loopback import environment, loopback_cluster


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--nodes", type=int, default=2, help="a loopback cluster of this many nodes (0: none)")
    ap.add_argument("--compressors", default="xz,ppmd-o8,cm,lstm-wide")
    ap.add_argument("--limit", type=int, default=200_000)
    ap.add_argument("--out", default=str(RESULTS / "ray-scaling"))
    args = ap.parse_args()
    names = args.compressors.split(",")
    sources = bench.corpus_sources(bench.bundled_corpus(), bench.DEFAULT_FILES, args.limit)
    rows = []
    def measured(workers: int, setup: str, run) -> None:
        t0 = time.perf_counter()
        got = run()
        wall = time.perf_counter() - t0
        crossed = sum(cluster.crossed(r) for r in got)
        rows.append({"workers": workers, "setup": setup, "wall_s": round(wall, 1), "tasks": len(got),
                     "verified": sum(r["verified"] for r in got), "crossed": crossed})
        print(json.dumps(rows[-1]), flush=True)

    env = environment()
    os.environ.update(env)  # one token for every Ray instance of this process (its first is kept)
    for n in map(int, args.workers.split(",")):
        measured(n, f"1 node, {n} CPU", lambda n=n: cluster.run(names, sources, cluster.LOCAL, cpus=n))
    if args.nodes:
        def on_nodes():
            with loopback_cluster(env, args.nodes) as address:
                return cluster.run(names, sources, address)

        measured(args.nodes, f"{args.nodes} nodes, 1 CPU each", on_nodes)
    base = rows[0]["wall_s"] * rows[0]["workers"]
    for r in rows:
        r["speedup"] = round(rows[0]["wall_s"] / r["wall_s"], 2)
        r["efficiency"] = round(base / (r["wall_s"] * r["workers"]), 2)
    out = Path(args.out)
    meta = {"compressors": names, "files": len(sources), "limit": args.limit, "cores": os.cpu_count()}
    write_json(out.with_suffix(".json"), {**meta, "rows": rows})
    lines = [f"`lmzip bench` as Ray tasks on a local instance of N CPUs ({os.cpu_count()} cores here): "
             f"{', '.join(names)} × the {len(sources)} default files (first {args.limit:,} bytes each), "
             "each compressed in one task and decompressed in another, every row verified; wall time includes "
             "starting Ray (`python benchmarks/ray_scaling.py`). On the loopback cluster (a head and "
             "`ray start --address` nodes on this machine) every row is decompressed on another node than it "
             "was compressed on.", "",
             "| workers | Ray | wall s | rows verified | decompressed on another node | speed-up | efficiency |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['workers']} | {r['setup']} | {r['wall_s']} | {r['verified']}/{r['tasks']} | {r['crossed']} | "
              f"{r['speedup']} | {r['efficiency']} |" for r in rows]
    write_md(out.with_suffix(".md"), lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
