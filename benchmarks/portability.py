"""Coded size of the default pair on the issue's four files, every mode, through the CLI.

Each row is one `lmzip compress` process (the defaults a user gets) followed by one
`lmzip decompress` process and a byte comparison, so the figures are those of real files.
Run it at two commits (before and after a format change) on the same machine and compare:

    .venv/bin/python benchmarks/portability.py --out benchmarks/results/portability/format8.json
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

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT.parent / "shared" / "corpora" / "bench"
FILES = ("canterbury/alice29.txt", "calgary/book1", "enwik/enwik6", "shakespeare/tinyshakespeare.txt")
MODES = {"static": [], "mix": ["--mix"], "adapt+mix": ["--adapt", "--mix"]}


def _run(args: list[str]) -> tuple[float, int]:
    """Run one lmzip command; returns wall seconds and peak resident KiB."""
    cmd = ["/usr/bin/time", "-f", "%e %M", sys.executable, "-m", "lmzip", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode:
        sys.exit(f"{' '.join(args)}: {r.stderr.strip()}")
    wall, kib = r.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kib)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="gpt-wide,lstm-wide")
    ap.add_argument("--modes", default="static,mix,adapt+mix")
    ap.add_argument("--files", default=",".join(FILES))
    args = ap.parse_args()
    out = Path(args.out)
    rows = json.loads(out.read_text())["rows"] if out.exists() else []
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout
    for model in args.models.split(","):
        for mode in args.modes.split(","):
            for f in args.files.split(","):
                src = BENCH / f
                with tempfile.TemporaryDirectory() as d:
                    lmz, back = Path(d) / "x.lmz", Path(d) / "x.out"
                    tc, mc = _run(["compress", "-q", "-m", model, *MODES[mode], "-o", str(lmz), str(src)])
                    td, md = _run(["decompress", "-q", "-o", str(back), str(lmz)])
                    row = {"model": model, "mode": mode, "file": f, "bytes": src.stat().st_size,
                           "compressed": lmz.stat().st_size, "verified": back.read_bytes() == src.read_bytes(),
                           "compress_s": tc, "decompress_s": td, "peak_mib": max(mc, md) / 1024,
                           "git": git.strip(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                rows = [r for r in rows if (r["model"], r["mode"], r["file"]) != (model, mode, f)] + [row]
                print(f"{model:10s} {mode:9s} {f:34s} {8 * row['compressed'] / row['bytes']:.4f} bpb "
                      f"{tc:7.1f}/{td:7.1f} s  {'ok' if row['verified'] else 'FAILED'}", flush=True)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
