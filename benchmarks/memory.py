"""Peak memory of `lmzip compress` and `decompress` against the input size: it must follow the block
size, not the input. Each run is one CLI process (default options; its groups run in its threads); the
peak is the largest sum of the resident memory of the process and any children, sampled every 50 ms
from /proc.

    .venv/bin/python benchmarks/memory.py            # 1 GB of random bytes; 2 MB and 20 MB of English text
    .venv/bin/python benchmarks/memory.py --text-only
    .venv/bin/python benchmarks/memory.py --levels 1,2,3,4,5 [--level-bytes N]   # each level on one block

The text is the start of ../shared/corpora/train/en/gutenberg_train.txt (a memory test: the model
learned from it, so its bits per byte say nothing). Writes benchmarks/results/memory.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import RESULTS, ROOT, TRAINING, write_json, write_md

TEXT = TRAINING / "en" / "gutenberg_train.txt"
PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree(pid: int) -> list[int]:
    """pid and all its descendants (from /proc/*/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def _rss(pids: list[int]) -> int:
    total = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * PAGE
        except OSError:
            pass
    return total


def run(args: list[str]) -> tuple[float, int]:
    """Run `lmzip ARGS`; returns wall seconds and the peak resident bytes of its process tree."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "lmzip", *args], cwd=ROOT, stderr=subprocess.PIPE)
    peak = 0
    while p.poll() is None:
        peak = max(peak, _rss(_tree(p.pid)))
        time.sleep(0.05)
    err = p.stderr.read().decode()
    if p.returncode:
        sys.exit(f"lmzip {' '.join(args)}: {err.strip()}")
    return time.perf_counter() - t0, peak


def measure(name: str, src: Path, d: Path, level: int | None = None) -> dict:
    lmz, back = d / (src.name + ".lmz"), d / (src.name + ".out")
    tc, mc = run(["compress", "-q", "-f", *([f"-{level}"] if level else []), "-o", str(lmz), str(src)])
    td, md = run(["decompress", "-q", "-f", "-o", str(back), str(lmz)])
    same = subprocess.run(["cmp", "-s", str(src), str(back)]).returncode == 0
    blocks = json.loads(subprocess.run([sys.executable, "-m", "lmzip", "list", "--json", str(lmz)], cwd=ROOT,
                                       capture_output=True, text=True).stdout)[0]["blocks"]
    row = {"input": name, "bytes": src.stat().st_size, "compressed": lmz.stat().st_size, "blocks": blocks,
           "compress_s": round(tc, 1), "decompress_s": round(td, 1), "compress_peak_mib": round(mc / 2**20),
           "decompress_peak_mib": round(md / 2**20), "verified": same}
    print(json.dumps(row), flush=True)
    back.unlink()
    lmz.unlink()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--text-only", action="store_true")
    ap.add_argument("--tmp", default=None, help="where the inputs and outputs go (needs ~3 GB for 1 GB)")
    ap.add_argument("--levels", help="instead: these levels (comma-separated) on --level-bytes of the text")
    ap.add_argument("--level-bytes", type=int, default=4_194_304, help="one whole block by default")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        d = Path(tmp)
        if args.levels:
            src = d / f"text-{args.level_bytes}"
            with open(TEXT, "rb") as f:
                src.write_bytes(f.read(args.level_bytes))
            for lv in args.levels.split(","):
                rows.append(measure(f"{args.level_bytes:,} bytes of English text, -{lv}", src, d, int(lv)))
            write(rows)
            return
        if not args.text_only:
            rnd = d / "random-1GB"
            with open(rnd, "wb") as f:
                for _ in range(1024):
                    f.write(os.urandom(1 << 20))
            rows.append(measure("1 GB of random bytes (stored)", rnd, d))
            rnd.unlink()
        for mb in (2, 20):
            src = d / f"text-{mb}MB"
            with open(TEXT, "rb") as f:
                src.write_bytes(f.read(mb * 1000 * 1000))
            rows.append(measure(f"{mb} MB of English text, default model", src, d))
    write(rows)


def write(rows: list[dict]) -> None:
    """memory.{json,md}, keeping the committed rows of inputs not measured this time (--text-only)."""
    out = RESULTS
    old = json.loads((out / "memory.json").read_text())["rows"] if (out / "memory.json").exists() else []
    new = {r["input"]: r for r in rows}
    rows = [new.pop(r["input"], r) for r in old] + list(new.values())
    write_json(out / "memory.json", {"rows": rows})
    lines = ["Peak memory against input size (benchmarks/memory.py): one `lmzip compress` and one `lmzip decompress` "
             "process each, default options unless a level is named, peak of the summed resident memory of the process "
             "and any children.", "",
             "| input | bytes | blocks | compressed | compress s | decompress s | compress peak MiB | "
             "decompress peak MiB | verified |", "|---|---:|---:|---:|---:|---:|---:|---:|:-:|"]
    for r in rows:
        lines.append(f"| {r['input']} | {r['bytes']:,} | {r['blocks']} | {r['compressed']:,} | {r['compress_s']} | "
                     f"{r['decompress_s']} | {r['compress_peak_mib']} | {r['decompress_peak_mib']} | "
                     f"{'✓' if r['verified'] else 'FAILED'} |")
    write_md(out / "memory.md", lines)


if __name__ == "__main__":
    main()
