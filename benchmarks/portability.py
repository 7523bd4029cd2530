"""Coded size of the default pair on the issue's four files, every mode, through the CLI.

Each row is one `lmzip compress` process (the defaults a user gets) followed by one
`lmzip decompress` process and a byte comparison, so the figures are those of real files.
Run it at two commits (before and after a format change) on the same machine and compare:

    .venv/bin/python benchmarks/portability.py --out benchmarks/results/portability/format8.json
    .venv/bin/python benchmarks/portability.py --compare DIR   # DIR/format7.json + format8.json -> DIR/comparison.md

``--root TREE`` runs another checkout's lmzip (with its own .venv), for example a worktree of the
last commit before a format change; ``--no-verify`` only compresses (the long learning runs).
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

from common import BENCH, ROOT, write_json

FILES = ("canterbury/alice29.txt", "calgary/book1", "enwik/enwik6", "shakespeare/tinyshakespeare.txt")
MODES = {"static": [], "mix": ["--mix"], "adapt+mix": ["--adapt", "--mix"]}


def _run(args: list[str], root: Path = ROOT) -> tuple[float, int]:
    """Run one lmzip command of the checkout ``root``; returns wall seconds and peak resident KiB."""
    python = root / ".venv" / "bin" / "python"
    cmd = ["/usr/bin/time", "-f", "%e %M", str(python if python.exists() else sys.executable), "-m", "lmzip", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
    if r.returncode:
        sys.exit(f"{' '.join(args)}: {r.stderr.strip()}")
    wall, kib = r.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kib)


def _mark(*verified) -> str:
    """✓ both round trips compared equal, – one was not decompressed (--no-verify), ✗ one failed."""
    return "✗" if False in verified else "–" if None in verified else "✓"


def compare(d: Path) -> str:
    """Markdown: each row's size in format 7 and format 8, and speed.json's rows side by side if present."""
    old, new = (json.loads((d / f"format{v}.json").read_text())["rows"] for v in (7, 8))
    key = lambda r: (r["model"], r["mode"], r["file"])  # noqa: E731
    o = {key(r): r for r in old}
    lines = ["Coded size, format 7 (float arithmetic, last commit before format 8) against today's portable "
             "files (format8.json: exact integer arithmetic 3 with int8 operands, learning in deterministic float64 "
             "with int8-limb products; written as format 9 since lmzip 0.5.0, whose one-block payloads are format "
             "8's), the same machine, `lmzip compress` defaults, each file decompressed and compared (✓) or, for "
             "the long learning runs, only compressed (–) (benchmarks/portability.py).", "",
             "| model | mode | file | bytes | format 7 | portable | change | bpb 7 | bpb now | verified |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|:-:|"]
    for r in new:
        if key(r) not in o:
            continue
        a = o[key(r)]
        change = 100 * (r["compressed"] / a["compressed"] - 1)
        lines.append(f"| {r['model']} | {r['mode']} | {r['file'].split('/')[-1]} | {r['bytes']:,} | "
                     f"{a['compressed']:,} | {r['compressed']:,} | {change:+.2f}% | "
                     f"{8 * a['compressed'] / a['bytes']:.4f} | {8 * r['compressed'] / r['bytes']:.4f} | "
                     f"{_mark(r['verified'], a['verified'])} |")
    sp = [d / f"speed-format{v}.json" for v in (7, 8)]
    if all(p.exists() for p in sp):
        s7, s8 = ({(x["name"], x["mode"], x["processes"]): x for x in json.loads(p.read_text())["rows"]} for p in sp)
        lines += ["", "Speed on alice29.txt, KB/s compress / decompress, one thread per process in both "
                  "directions (benchmarks/speed.py at each commit, one after the other on this machine; format "
                  "7's run overlapped short test runs, which is why its lstm-wide two-process compress figure is "
                  "low). Format 7 cut alice29.txt into one group per process; format 8 cuts by the input alone, "
                  "one group here, so a second process does not help it. 'portable' is speed-format8.json "
                  "(arithmetics 3 and 4, format 9 since lmzip 0.5; until lmzip 0.5.1 its decoder took every "
                  "core, so earlier decompress figures were two-thread ones). Compress runs first in a fresh "
                  "process and pays for the learner's first touch of its memory (gpt-wide: +1.3 GB; its first "
                  "learning step took 7.0 s against 2.3-2.9 s for the others, with 4.7 s of system time on "
                  "this virtual machine); decompress then reuses that memory.", "",
                  "| model | mode | processes | format 7 | portable | peak MiB 7 / now |",
                  "|---|---|---:|---:|---:|---:|"]
        for k, b in s8.items():
            if k in s7:
                a = s7[k]
                lines.append(f"| {k[0]} | {k[1]} | {k[2]} | {a['compress_kbps']:.1f} / {a['decompress_kbps']:.1f} | "
                             f"{b['compress_kbps']:.1f} / {b['decompress_kbps']:.1f} | "
                             f"{a['peak_mib']:.0f} / {b['peak_mib']:.0f} |")
    text = "\n".join(lines) + "\n"
    (d / "comparison.md").write_text(text)
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--compare", type=Path, help="write DIR/comparison.md from DIR's results instead")
    ap.add_argument("--models", default="gpt-wide,lstm-wide")
    ap.add_argument("--modes", default="static,mix,adapt+mix")
    ap.add_argument("--files", default=",".join(FILES))
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose lmzip runs (default: this one)")
    ap.add_argument("--no-verify", action="store_true", help="compress only (no decompression, no comparison)")
    args = ap.parse_args()
    if args.compare:
        print(compare(args.compare), end="")
        return
    if not args.out:
        ap.error("--out or --compare is needed")
    out = Path(args.out)
    rows = json.loads(out.read_text())["rows"] if out.exists() else []
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=args.root).stdout
    for model in args.models.split(","):
        for mode in args.modes.split(","):
            for f in args.files.split(","):
                src = BENCH / f
                with tempfile.TemporaryDirectory() as d:
                    lmz, back = Path(d) / "x.lmz", Path(d) / "x.out"
                    tc, mc = _run(["compress", "-q", "-m", model, *MODES[mode], "-o", str(lmz), str(src)], args.root)
                    td, md = (None, 0) if args.no_verify else _run(["decompress", "-q", "-o", str(back), str(lmz)],
                                                                   args.root)
                    verified = None if args.no_verify else back.read_bytes() == src.read_bytes()
                    row = {"model": model, "mode": mode, "file": f, "bytes": src.stat().st_size,
                           "compressed": lmz.stat().st_size, "verified": verified,
                           "compress_s": tc, "decompress_s": td, "peak_mib": max(mc, md) / 1024,
                           "git": git.strip(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                rows = [r for r in rows if (r["model"], r["mode"], r["file"]) != (model, mode, f)] + [row]
                state = {True: "ok", False: "FAILED", None: "not decompressed"}[verified]
                print(f"{model:10s} {mode:9s} {f:34s} {8 * row['compressed'] / row['bytes']:.4f} bpb "
                      f"{tc:7.1f}/{td or 0:7.1f} s  {state}", flush=True)
                out.parent.mkdir(parents=True, exist_ok=True)
                write_json(out, {"rows": rows})


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
