"""The per-file table of issue 24: whole-file .lmz round trips (benchmarks/roundtrip.sh) against xz -9e
and PPMd order 8 (benchmarks/cm.py's figures for the same files) and lmzip's best before format 11.
Writes benchmarks/results/mix.md.

    .venv/bin/python benchmarks/mix_table.py [RUN ...]   # runs: roundtrip TSV names, e.g. gpt-wide_mix_full
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

from common import RESULTS, write_md

BEFORE = "gpt-wide_adapt+mix_full"  # lmzip's best mode over the bench files before format 11 (1.773 bpb)
RUNS = {"cm_static_full": "-1 (cm)", "cm-9_static_full": "cm-9", "gpt-wide_mix_full": "gpt-wide --mix (-4)"}


def roundtrip(name: str) -> dict[str, int]:
    """file (as cm.json names it) -> compressed bytes, from a roundtrip TSV; every row must be exact."""
    out = {}
    with open(RESULTS / "roundtrip" / f"{name}.tsv") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["result"] != "exact":
                sys.exit(f"{name}: {row['file']} did not round-trip")
            out[row["file"]] = int(row["compressed"])
    return out


def main() -> None:
    runs = {n: RUNS.get(n, n) for n in (sys.argv[1:] or RUNS)}
    cm = json.loads((RESULTS / "cm.json").read_text())
    sizes, ref = cm["input_bytes"], dict(cm["compressed_bytes"])
    key = {f.replace("/", "_"): f for f in sizes}
    cols = {"xz -9e": ref["xz"], "ppmd-o8": ref["ppmd-o8"],
            "best before (gpt-wide +adapt+mix, format 10)": {key[k]: v for k, v in roundtrip(BEFORE).items()}}
    cols.update({label: {key[k]: v for k, v in roundtrip(n).items()} for n, label in runs.items()})
    names = list(cols)
    total = sum(sizes.values())
    lines = ["# Whole files, every lmzip column a real .lmz round trip (separate processes, every byte compared)", "",
             "Compressed bytes per file of ../shared/corpora/bench (benchmarks/mix_table.py, from "
             "benchmarks/results/roundtrip/*.tsv and cm.json's xz and PPMd figures); **bold**: smallest of the row.",
             "", "| file | bytes | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
    for f, n in sizes.items():
        vals = [cols[c][f] for c in names]
        lo = min(vals)
        lines.append(f"| {f} | {n:,} | " + " | ".join(f"**{v:,}**" if v == lo else f"{v:,}" for v in vals) + " |")
    lines.append("| **all (bits per byte)** | " + f"{total:,} | "
                 + " | ".join(f"{8 * sum(cols[c].values()) / total:.3f}" for c in names) + " |")
    last = names[-1]
    big = [f for f in sizes if ref["ppmd-o8"][f] > 1024]
    wins = sum(cols[last][f] < ref["ppmd-o8"][f] for f in big)
    tiny = {f: cols[last][f] - ref["ppmd-o8"][f] for f in sizes if ref["ppmd-o8"][f] <= 1024}
    lines += ["", f"{last}: smaller than PPMd order 8 on {wins} of the {len(big)} files where PPMd writes more than "
              f"1 KB; smaller than xz on {sum(cols[last][f] < ref['xz'][f] for f in sizes)} "
              "of " f"{len(sizes)}; on the files PPMd codes in at most 1 KB, bytes more than PPMd: "
              + ", ".join(f"{Path(f).name} {d:+d}" for f, d in tiny.items()) + "."]
    write_md(RESULTS / "mix.md", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
