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


def updated(readme: str) -> str:
    """The README with its generated sections replaced."""
    readme = re.sub(re.escape(START) + ".*?" + re.escape(END), lambda m: section(), readme, flags=re.S)
    return re.sub(re.escape(FSTART) + ".*?" + re.escape(FEND), lambda m: frontier_section(), readme, flags=re.S)


if __name__ == "__main__":
    path = ROOT / "README.md"
    path.write_text(updated(path.read_text()))
    sys.stderr.write("README.md results section regenerated\n")
