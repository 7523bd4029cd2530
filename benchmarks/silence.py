"""What each hashed model of counting adds to one file: the file's payload with every input, then with one model's
inputs silenced at a time (its table's room still taken: a lower bound on what dropping it saves in bytes).

    .venv/bin/python benchmarks/silence.py ../shared/corpora/bench/canterbury_large/world192.txt --level 9 --rows 60,61
    .venv/bin/python benchmarks/silence.py benchmarks/kinds-set/en --version 25 --rows all \
        > benchmarks/results/silence/en.log                                   # every row, one file of the kinds set
    .venv/bin/python benchmarks/silence.py --summary benchmarks/results/silence    # the logs there as one table
    .venv/bin/python benchmarks/silence.py FILE --version 25 --rows 18,23,24 --together   # rows silenced at once
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np


def summary(folder: Path) -> None:
    """Every log in ``folder`` (this script's output with --rows all) as one table, silence.md: each row's bytes
    added per file in % of its payload, the rows that add least first."""
    files: dict[str, tuple[int, dict[int, int]]] = {}
    setting = set()
    for log in sorted(folder.glob("*.log")):
        text = log.read_text()
        base = re.search(r"every input: ([\d,]+) bytes", text)
        if base is None:
            raise SystemExit(f"silence: {log} holds no 'every input' line: not this script's log")
        found = re.findall(r"hashed model (\d+): [\d,]+ bytes \(([+-][\d,]+)\)", text)
        files[log.stem] = (int(base[1].replace(",", "")), {int(k): int(d.replace(",", "")) for k, d in found})
        setting.add(text.splitlines()[0].split(" bytes, ")[-1])  # "cm level L, cm version V"
    if not files:
        raise SystemExit(f"silence: no .log files in {folder}")
    if len(setting) > 1:  # row k of one version is another model in another
        raise SystemExit(f"silence: the logs were made at different settings: {sorted(setting)}")
    head = setting.pop()
    every = set.union(*(set(r) for _, r in files.values()))
    shared = sorted(set.intersection(*(set(r) for _, r in files.values())))
    if len(shared) < len(every):
        print(f"silence: rows {sorted(every - set(shared))} are not in every log: left out")
    pct = {k: [100 * r[k] / base for base, r in files.values()] for k in shared}
    lines = [f"What each hashed model adds: its inputs silenced one at a time (benchmarks/silence.py; {len(files)} "
             f"files, {head}). % of the payload with every input; the rows that add least first.", "",
             "| row | most | mean | " + " | ".join(files) + " |", "|---:|---:|---:|" + "---:|" * len(files)]
    for k in sorted(shared, key=lambda k: (max(pct[k]), sum(pct[k]))):
        lines.append(f"| {k} | {max(pct[k]):+.3f} | {sum(pct[k]) / len(files):+.3f} | "
                     + " | ".join(f"{p:+.2f}" for p in pct[k]) + " |")
    (folder / "silence.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?")
    ap.add_argument("--level", type=int, default=9, help="counting level (from 7 on the newest cm version)")
    ap.add_argument("--version", type=int, default=None, help="cm version (default: the level's)")
    ap.add_argument("--rows", default="", help="hashed models to silence one at a time (rows of the version's "
                    "table: lmzip.cm.body's list, less 2), comma-separated, or 'all'")
    ap.add_argument("--together", action="store_true", help="silence the rows all at once, not one at a time")
    ap.add_argument("--head", type=int, default=0, help="code only the file's first HEAD bytes (0: all of it)")
    ap.add_argument("--summary", default="", help="a folder of this script's logs: write their table, silence.md")
    args = ap.parse_args()
    if args.summary:
        return summary(Path(args.summary))
    if args.file is None:
        ap.error("a file to code, or --summary FOLDER")
    from lmzip.cm import model
    from lmzip.cm.format import version_for
    from lmzip.cm.sizes import n_hashed

    version = args.version or version_for(args.level)
    rows = list(range(n_hashed(version))) if args.rows == "all" else [int(r) for r in args.rows.split(",") if r]
    if args.together and not rows:
        ap.error("--together silences the --rows given: none were")
    data = Path(args.file).read_bytes()
    data = data[:args.head] if args.head else data
    src = np.frombuffer(data, dtype=np.uint8)
    base = 0
    print(f"{Path(args.file).name}, {len(data):,} bytes, cm level {args.level}, cm version {version}")
    for k in [None, *([tuple(rows)] if args.together else [(r,) for r in rows])]:
        t0 = time.perf_counter()
        size = len(model.run(True, src, len(data), model.allocate(args.level, args.version, len(data)),
                             silence=k or ()))
        what = "every input" if k is None else f"- hashed model{'s' if len(k) > 1 else ''} {','.join(map(str, k))}"
        base = size if k is None else base
        extra = "" if k is None else f" ({size - base:+,})"
        print(f"{what}: {size:,} bytes{extra}, {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
