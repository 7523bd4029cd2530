"""Whether a change left every file's bytes alone: the first 64 KB of each bench file compressed at the
given levels, one digest per file, by the lmzip tree first on the path; then two such runs compared.

    PYTHONPATH=/path/to/old-checkout .venv/bin/python benchmarks/same_bytes.py digest before.json
    .venv/bin/python benchmarks/same_bytes.py digest after.json
    .venv/bin/python benchmarks/same_bytes.py compare before.json after.json
(``git worktree add /path/to/old-checkout REV`` gives the old tree; the digests name each file's size.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from common import BENCH, write_json


def digest(levels: list[int], limit: int) -> dict[str, str]:
    """sha256[:16] and size of each bench file's first ``limit`` bytes compressed at each level."""
    import torch

    import lmzip
    from lmzip.api import LMCompressor
    from lmzip.levels import LEVELS

    torch.set_num_threads(1)
    print(f"lmzip from {lmzip.__file__}", file=sys.stderr)
    files = sorted(p for p in BENCH.rglob("*") if p.is_file())
    out = {}
    for level in levels:
        lv = LEVELS[level]
        lm = LMCompressor("cm", jobs=1, threads=1) if lv.model == "cm" else \
            LMCompressor(lv.model, jobs=1, threads=1, **lv.options())
        for p in files:
            blob = lm.compress(p.read_bytes()[:limit])
            out[f"-{level} {p.relative_to(BENCH)}"] = f"{hashlib.sha256(blob).hexdigest()[:16]} {len(blob)}"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("digest")
    d.add_argument("out")
    d.add_argument("--levels", default="1,4", help="comma-separated levels (default: -1 and the default -4)")
    d.add_argument("--limit", type=int, default=65536, help="bytes of each file")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    a = ap.parse_args()
    if a.cmd == "digest":
        write_json(Path(a.out), digest([int(x) for x in a.levels.split(",")], a.limit))
        return
    before, after = (json.loads(open(f).read()) for f in (a.before, a.after))
    differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    print(f"{len(before.keys() & after.keys()) - len(differ)} of {len(before.keys() | after.keys())} the same")
    for k in differ:
        print(f"  differs: {k}: {before.get(k)} -> {after.get(k)}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
