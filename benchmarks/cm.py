"""lmzip.cm (the counting context-mixing compressor) on all 42 bench files, against xz -9e and
PPMd order 8: bits per byte per file, compress/decompress speed and peak memory.

    nice -n 19 .venv/bin/python benchmarks/cm.py                 # levels 6 and 8
    nice -n 19 .venv/bin/python benchmarks/cm.py --levels 7
    nice -n 19 .venv/bin/python benchmarks/cm.py --levels 9 --keep 6   # level 6's committed column kept

Each cm level runs in its own process (so its peak resident memory is its own): it compresses and
decompresses every file, checks the round trip, and reports CPU seconds (one core: the model loop is
single-threaded) after a warm-up call has compiled the loop. Writes benchmarks/results/cm.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from common import BENCH, peak_mib, write_json, write_md
from common import RESULTS as OUT


def files() -> list[Path]:
    """The bench files, sorted by kind then name."""
    return sorted(p for p in BENCH.rglob("*") if p.is_file())


def worker(level: int) -> None:
    """Code every file at one level in this process; one JSON line per file, then the peak RSS."""
    from lmzip import cm

    for lv in (1, level):  # the loop compiles beside level 1's small tables: a cold cache adds no peak to the level's
        cm.decompress(cm.compress(b"warm up the compiled loop " * 10, lv))
    for p in files():
        data = p.read_bytes()
        t0 = time.process_time()
        blob = cm.compress(data, level)
        t1 = time.process_time()
        ok = cm.decompress(blob) == data
        t2 = time.process_time()
        print(json.dumps({"file": str(p.relative_to(BENCH)), "bytes": len(blob), "c_s": t1 - t0, "d_s": t2 - t1,
                          "ok": ok}), flush=True)
    peak = int(peak_mib() * 2**20)  # bytes
    print(json.dumps({"peak_rss": peak, "tables": cm.table_bytes(level)}), flush=True)


def run_level(level: int) -> dict:
    """Run `worker(level)` in a child process and collect its lines."""
    p = subprocess.run([sys.executable, __file__, "--worker", str(level)], capture_output=True, text=True, check=True)
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    return {"files": {r["file"]: r for r in rows[:-1]}, **rows[-1]}


def classic() -> dict[str, dict[str, int]]:
    """Compressed sizes of xz -9e and PPMd o8 (lmzip's bench classes), round trips checked."""
    from lmzip.bench.compressors import Ppmd, Xz

    out: dict[str, dict[str, int]] = {"xz": {}, "ppmd-o8": {}}
    for p in files():
        data = p.read_bytes()
        for name, c in (("xz", Xz()), ("ppmd-o8", Ppmd(8))):
            blob = c.compress(data)
            assert c.decompress(blob) == data, (name, p)
            out[name][str(p.relative_to(BENCH))] = len(blob)
    return out


def bpb(n_out: int, n_in: int) -> float:
    return 8 * n_out / n_in if n_in else 0.0


def write(sizes: dict[str, int], ref: dict[str, dict[str, int]], levels: dict[int, dict]) -> None:
    """cm.json (everything measured) and cm.md (the table and the summary)."""
    names = list(sizes)
    cols = ["xz", "ppmd-o8"] + [f"cm-L{lv}" for lv in levels]
    got = {**ref, **{f"cm-L{lv}": {f: r["files"][f]["bytes"] for f in names} for lv, r in levels.items()}}
    total_in = sum(sizes.values())
    summary = {}
    for c in cols:
        summary[c] = {"total_bpb": round(bpb(sum(got[c].values()), total_in), 4)}
    for lv, r in levels.items():
        fs = r["files"].values()
        summary[f"cm-L{lv}"].update({
            "compress_kb_s": round(total_in / 1024 / sum(x["c_s"] for x in fs), 1),
            "decompress_kb_s": round(total_in / 1024 / sum(x["d_s"] for x in fs), 1),
            "peak_rss_mib": round(r["peak_rss"] / 2**20), "tables_mib": round(r["tables"] / 2**20, 1),
            "round_trips_ok": all(x["ok"] for x in fs),
            "beats_xz": sum(got[f"cm-L{lv}"][f] < got["xz"][f] for f in names),
            "beats_ppmd": sum(got[f"cm-L{lv}"][f] < got["ppmd-o8"][f] for f in names)})
    write_json(OUT / "cm.json", {"input_bytes": sizes, "compressed_bytes": got, "summary": summary,
                                 "levels": {str(k): v for k, v in levels.items()}})
    lines = ["# lmzip.cm against xz and PPMd", "",
             "benchmarks/cm.py: bits per byte on the 42 bench files (lower is better; **bold** = best of the row). "
             "Speeds are CPU seconds of one core after the numba compile, on a shared 2-core machine under "
             "`nice -n 19`; peak memory is the resident peak of the process that coded all files at that level.", "",
             "| file | bytes | " + " | ".join(cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    for f in names:
        vals = [bpb(got[c][f], sizes[f]) for c in cols]
        best = min(vals)
        cells = [f"**{v:.3f}**" if v == best else f"{v:.3f}" for v in vals]
        lines.append(f"| {f} | {sizes[f]:,} | " + " | ".join(cells) + " |")
    lines.append(f"| **all 42 (total bits / total bytes)** | {total_in:,} | "
                 + " | ".join(f"{summary[c]['total_bpb']:.3f}" for c in cols) + " |")
    lines += ["", "| cm level | total bpb | files better than xz | files better than PPMd o8 | compress KB/s | "
              "decompress KB/s | tables MiB | peak RSS MiB | round trips |",
              "|---|---:|---:|---:|---:|---:|---:|---:|:-:|"]
    for lv in levels:
        s = summary[f"cm-L{lv}"]
        lines.append(f"| -L{lv} | {s['total_bpb']:.3f} | {s['beats_xz']}/42 | {s['beats_ppmd']}/42 | "
                     f"{s['compress_kb_s']} | {s['decompress_kb_s']} | {s['tables_mib']} | {s['peak_rss_mib']} | "
                     f"{'✓' if s['round_trips_ok'] else 'FAILED'} |")
    write_md(OUT / "cm.md", lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", type=int, nargs="+", default=[6, 8])
    ap.add_argument("--keep", type=int, nargs="*", default=[],
                    help="levels whose committed results stay in the table, not run again (their cm version unchanged)")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    sizes = {str(p.relative_to(BENCH)): p.stat().st_size for p in files()}
    ref = classic()
    print("xz and ppmd done", flush=True)
    old = json.loads((OUT / "cm.json").read_text())["levels"] if args.keep else {}
    levels = {lv: old[str(lv)] for lv in args.keep}
    for lv in args.levels:
        levels[lv] = run_level(lv)
        print(f"cm -L{lv} done", flush=True)
    write(sizes, ref, dict(sorted(levels.items())))


if __name__ == "__main__":
    main()
