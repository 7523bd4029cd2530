"""Regenerate the README's results section from the committed benchmark JSON (never by hand).

    python benchmarks/update_readme.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "default"
START, END = "<!-- results:start -->", "<!-- results:end -->"
FSTART, FEND = "<!-- frontier:start -->", "<!-- frontier:end -->"
LSTART, LEND = "<!-- learning:start -->", "<!-- learning:end -->"
LEARNING = ROOT / "benchmarks" / "results" / "learning"


def section() -> str:
    """The generated text that belongs between the README's results markers."""
    from lmzip import report

    doc = report.load(RESULTS / "results.json")
    return (f"{START}\n{report.markdown(doc)}\n"
            "![bits per byte against decompression speed](benchmarks/results/default/pareto.png)\n\n"
            "![bits per byte per file](benchmarks/results/default/bpb_per_file.png)\n"
            f"{END}")


def frontier_section() -> str:
    """The design comparison table (benchmarks/frontier.py) between the frontier markers."""
    table = (ROOT / "benchmarks" / "results" / "frontier.md").read_text()
    return (f"{FSTART}\n{table}\n"
            "![validation bits per byte against coding speed, equal budget](benchmarks/results/frontier.png)\n"
            f"{FEND}")


def learning_section() -> str:
    """Bits per byte of every compressor in benchmarks/results/learning/*/results.json, one row each."""
    import json

    rows: dict[str, dict[str, float]] = {}
    for f in sorted(LEARNING.glob("*/results.json")):
        for r in json.loads(f.read_text())["rows"]:
            if r["verified"]:
                rows.setdefault(r["compressor"], {})[r["file"]] = 8 * r["compressed_bytes"] / r["original_bytes"]
    files = sorted({f for v in rows.values() for f in v})
    lines = ["| compressor | " + " | ".join(Path(f).name for f in files) + " |", "|---|" + "---:|" * len(files)]
    for name in sorted(rows, key=lambda n: (n != "ppmd-o8", n.split("+")[0], n.count("+"), n)):
        lines.append(f"| {name} | " + " | ".join(f"{rows[name][f]:.3f}" if f in rows[name] else "–"
                                                 for f in files) + " |")
    return f"{LSTART}\n" + "\n".join(lines) + f"\n{LEND}"


def updated(readme: str) -> str:
    """The README with its generated sections replaced."""
    for start, end, make in ((START, END, section), (LSTART, LEND, learning_section),
                             (FSTART, FEND, frontier_section)):
        readme = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda m, make=make: make(), readme, flags=re.S)
    return readme


if __name__ == "__main__":
    path = ROOT / "README.md"
    path.write_text(updated(path.read_text()))
    sys.stderr.write("README.md results section regenerated\n")
