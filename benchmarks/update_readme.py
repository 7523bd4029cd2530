"""Regenerate the generated sections of README.md and benchmarks/README.md from the committed JSON (never by hand).

    python benchmarks/update_readme.py            # rewrite the generated sections
    python benchmarks/update_readme.py --check    # exit 1 naming a stale page, writing nothing
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from common import RESULTS as OUT
from common import ROOT

RESULTS = OUT / "default"
START, END = "<!-- results:start -->", "<!-- results:end -->"
FSTART, FEND = "<!-- frontier:start -->", "<!-- frontier:end -->"
LSTART, LEND = "<!-- learning:start -->", "<!-- learning:end -->"
LEARNING = OUT / "learning"
RSTART, REND = "<!-- roundtrips:start -->", "<!-- roundtrips:end -->"
ROUNDTRIP = OUT / "roundtrip"
MODES = ("static", "mix", "adapt", "adapt+mix", "scratch")  # roundtrip.sh's modes, in the tables' order
LEARN_FILES = ("alice29.txt", "book1", "tinyshakespeare.txt", "enwik6")  # issue 5: against PPMd order 8
PSTART, PEND = "<!-- portability:start -->", "<!-- portability:end -->"
PORTABILITY = OUT / "portability" / "comparison.md"  # benchmarks/portability.py
KSTART, KEND = "<!-- kinds:start -->", "<!-- kinds:end -->"
KINDS = [OUT / f for f in ("vocab.md", "kinds.md")]  # benchmarks/vocab.py, kinds.py
VSTART, VEND = "<!-- levels:start -->", "<!-- levels:end -->"
LEVELS = OUT / "levels.md"  # benchmarks/levels.py
FULL = OUT / "shared-full-wide" / "results.json"  # xz and gpt-wide, whole files
FULL_LSTM = FULL.parent.parent / "shared-full-lstm" / "results.json"  # ppmd-o8 among them


def section() -> str:
    """The generated text that belongs between the README's results markers."""
    from lmzip.bench import report

    doc = report.load(RESULTS / "results.json")
    return (f"{START}\n{report.markdown(doc)}\n"
            "![bits per byte against decompression speed](benchmarks/results/default/pareto.png)\n\n"
            "![bits per byte per file](benchmarks/results/default/bpb_per_file.png)\n"
            f"{END}")


def frontier_section() -> str:
    """The design comparison table (benchmarks/frontier.py) between the frontier markers."""
    table = (OUT / "frontier.md").read_text()
    return (f"{FSTART}\n{table}\n"
            "![validation bits per byte against coding speed, equal budget](benchmarks/results/frontier.png)\n"
            f"{FEND}")


def _verified(path: Path) -> list[dict]:
    """The rows of a `lmzip bench` results.json that were decompressed and compared."""
    return [r for r in json.loads(path.read_text())["rows"] if r["verified"]]


def _run(path: Path) -> tuple[str, str, str]:
    """Compressor name, mode and limit of a roundtrip.sh result named MODEL_MODE_LIMIT.tsv."""
    model, mode, limit = path.stem.split("_")
    return (model if mode == "static" else f"{model}+{mode}"), mode, limit


def learning_section() -> str:
    """Bits per byte on the issue's four files: PPMd order 8, the legacy pair's learning rows
    (benchmarks/learning.sh) and the whole-file runs (static in-process, the rest round trips)."""
    rows: dict[str, dict[str, float]] = {}
    where: dict[str, str] = {}

    def add(name: str, source: str, file: str, original: int, compressed: int) -> None:
        if Path(file).name in LEARN_FILES:
            rows.setdefault(name, {})[Path(file).name] = 8 * compressed / original
            where[name] = source

    for f in sorted(LEARNING.glob("*/results.json")):
        for r in _verified(f):
            add(r["compressor"], "`learning.sh`", r["file"], r["original_bytes"], r["compressed_bytes"])
    for r in _verified(RESULTS / "results.json"):
        if r["compressor"] == "ppmd-o8":
            add("ppmd-o8", "`learning.sh`, `make bench`", r["file"], r["original_bytes"], r["compressed_bytes"])
    for r in _verified(FULL):
        if r["compressor"] != "xz":
            add(r["compressor"], "whole file, in-process", r["file"], r["original_bytes"], r["compressed_bytes"])
    for f in sorted(ROUNDTRIP.glob("*_full.tsv")):
        for r in _tsv(f):
            if r["result"] == "exact":  # "calgary_book1" -> "book1"
                add(_run(f)[0], "whole file, round trip", r["file"].split("_", 1)[1], int(r["bytes"]),
                    int(r["compressed"]))
    lines = ["| compressor | measured by | " + " | ".join(LEARN_FILES) + " |", "|---|---|" + "---:|" * len(LEARN_FILES)]
    for name in sorted(rows, key=lambda n: (n != "ppmd-o8", n.split("+")[0], n.count("+"), n)):
        lines.append(f"| {name} | {where[name]} | " + " | ".join(f"{rows[name][f]:.3f}" if f in rows[name] else "–"
                                                                  for f in LEARN_FILES) + " |")
    return f"{LSTART}\n" + "\n".join(lines) + f"\n{LEND}"


def _tsv(path: Path) -> list[dict[str, str]]:
    head, *rows = (line.split("\t") for line in path.read_text().splitlines())
    return [dict(zip(head, r, strict=True)) for r in rows]


def _times(path: Path) -> tuple[str, str, str]:
    """Compress and decompress wall seconds and the git commit from the last line of a roundtrip.sh log."""
    last = path.read_text().splitlines()[-1]
    m = re.search(r"compress (\d+) s, decompress (\d+) s", last)
    commit = re.search(r"; git ([\w+]+)", last)  # "a+b": a run resumed at another commit
    return (m.group(1) if m else "–", m.group(2) if m else "–", commit.group(1) if commit else "–")


def roundtrip_section() -> str:
    """One row per benchmarks/roundtrip.sh run, then the whole-file learning run against xz and static."""
    lines = ["| compressor | bytes per file | files exact | input bytes | bits per byte | compress s | decompress s "
             "| git |", "|---|---|---:|---:|---:|---:|---:|---|"]
    for f in sorted(ROUNDTRIP.glob("*.tsv"), key=lambda p: (_run(p)[2] != "full", p.stem.split("_")[0],
                                                           MODES.index(_run(p)[1]))):
        name, _, limit = _run(f)
        rows = _tsv(f)
        size = sum(int(r["bytes"]) for r in rows)
        bpb = 8 * sum(int(r["compressed"]) for r in rows) / size
        exact = sum(r["result"] == "exact" for r in rows)
        length = "whole file" if limit == "full" else f"first {int(limit) // 1024} KB"
        lines.append(f"| {name} | {length} | {exact}/{len(rows)} | {size:,} | {bpb:.3f} | "
                     + " | ".join(_times(f.with_suffix(".tsv.log"))) + " |")
    return f"{RSTART}\n" + "\n".join(lines) + "\n\n" + _versus_classic() + f"\n{REND}"


def _versus_classic() -> str:
    """On the text files (not the artificial ones, not stored by the static model): where each
    whole-file run of gpt-wide stands against xz -9e and PPMd order 8."""
    full: dict[str, dict[str, int]] = {}
    for path in (FULL, FULL_LSTM):
        for r in _verified(path):
            name = r["file"].replace("/", "_")
            full.setdefault(r["compressor"], {})[name] = r["compressed_bytes"]
            full.setdefault("original", {})[name] = r["original_bytes"]
    static, xz, ppmd = full["gpt-wide"], full["xz"], full["ppmd-o8"]
    text = sorted(f for f in static if not f.startswith("canterbury_artificial") and static[f] < full["original"][f])
    head = (f"Whole files against xz -9e and PPMd order 8 (`benchmarks/results/shared-full-lstm/`), on the "
            f"{len(text)} text files: ")
    lines = []
    for f in sorted(ROUNDTRIP.glob("gpt-wide_*_full.tsv"), key=lambda f: MODES.index(_run(f)[1])):
        coded = {r["file"]: int(r["compressed"]) for r in _tsv(f)}
        if set(text) <= set(coded):
            lost = [t for t in text if coded[t] >= xz[t]]
            lines.append(f"{_run(f)[0]} beats xz on {len(text) - len(lost)}"
                         + (f" (xz still wins on {', '.join(lost)})" if lost else "")
                         + f" and PPMd on {sum(coded[t] < ppmd[t] for t in text)}")
    return head + "; ".join(lines) + "."


def portability_section() -> str:
    """Format 7 against format 8 on one machine: coded sizes and speed (benchmarks/portability.py --compare)."""
    return f"{PSTART}\n{PORTABILITY.read_text().strip()}\n{PEND}"


def levels_section() -> str:
    """The levels table (benchmarks/levels.py) between the levels markers (the table alone: the page says
    what it is)."""
    table = [ln for ln in LEVELS.read_text().splitlines() if ln.startswith("|")]
    return VSTART + "\n" + "\n".join(table) + "\n" + VEND


def kinds_section() -> str:
    """Every kind of text: bytes per token of the tokenizers, then bits per byte per kind (their own captions)."""
    return KSTART + "\n" + "\n".join(p.read_text().strip() + "\n" for p in KINDS) + KEND


# the pages with generated sections: the README (the results table) and the lab notebook (the rest)
PAGES = (ROOT / "README.md", ROOT / "benchmarks" / "README.md")


def updated(readme: str, page: Path = PAGES[0]) -> str:
    """``page``'s text with its generated sections replaced (links to benchmarks/ made relative to it)."""
    here = page.parent.relative_to(ROOT).as_posix()

    def local(text: str) -> str:
        return text if here == "." else text.replace("](" + here + "/", "](")

    for start, end, make in ((START, END, section), (LSTART, LEND, learning_section),
                             (FSTART, FEND, frontier_section), (RSTART, REND, roundtrip_section),
                             (PSTART, PEND, portability_section), (KSTART, KEND, kinds_section),
                             (VSTART, VEND, levels_section)):
        readme = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda m, make=make: local(make()), readme,
                        flags=re.S)
    return readme


def main() -> int:
    """Rewrite the pages' generated sections, or with --check only say which page is stale (exit status 1)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page would change")
    args = ap.parse_args()
    if not (RESULTS / "results.json").exists():
        sys.stderr.write(f"{(RESULTS / 'results.json').relative_to(ROOT)} is missing: run `make bench`\n")
        return 1
    if args.check:
        stale = [p for p in PAGES if updated(p.read_text(), p) != p.read_text()]
        for page in stale:
            sys.stderr.write(f"{page.relative_to(ROOT)} is stale: run python benchmarks/update_readme.py\n")
        return 1 if stale else 0
    for path in PAGES:
        path.write_text(updated(path.read_text(), path))
    sys.stderr.write("generated sections of README.md and benchmarks/README.md regenerated\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
