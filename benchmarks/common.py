"""What the benchmark scripts share: the repository's folders, the shared corpora, the own process's peak
memory, the CPU line and the result files (JSON and markdown) as they write them.

A script run as ``python benchmarks/x.py`` has this folder first on sys.path, so ``from common import ...``
works; lmzip itself is installed (``pip install -e .``), not put on the path.
"""

from __future__ import annotations

import json
import resource
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the repository
RESULTS = ROOT / "benchmarks" / "results"  # what is committed
CORPORA = ROOT.parent / "shared" / "corpora"  # the team's corpora, beside the repository (not in git)
BENCH = CORPORA / "bench"  # the 42 benchmark files
TRAINING = CORPORA / "train"  # the training text of the shipped models


def peak_mib() -> float:
    """This process's peak resident memory so far in MiB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_model() -> str:
    """The CPU's model name with its family and model numbers (/proc/cpuinfo; "AMD EPYC" alone says little)."""
    info = Path("/proc/cpuinfo")
    if not info.exists():
        return "?"
    fields = dict(ln.split(":", 1) for ln in info.read_text().split("\n\n")[0].splitlines() if ":" in ln)
    get = {k.strip(): v.strip() for k, v in fields.items()}.get
    return f"{get('model name', '?')} (family {get('cpu family', '?')}, model {get('model', '?')})"


def write_json(path: Path, doc: Any) -> None:
    """A result as JSON, one-space indented, with a final newline (as every results/*.json)."""
    path.write_text(json.dumps(doc, indent=1) + "\n")


def write_md(path: Path, lines: list[str]) -> None:
    """A result's markdown: its lines, with a final newline."""
    path.write_text("\n".join(lines) + "\n")
