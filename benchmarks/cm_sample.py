"""What a change to counting (lmzip.cm) gains: one cm level over a fixed sample, by the lmzip tree first on
the path, then two such runs compared file by file and by kind.

The sample: the first 256-512 KB of the bench files where paq8px leads most (issue 38's table: world192,
bible, book2, news, xiyouji, genji, gogol), four non-text files (obj2, geo, kennedy.xls, pic), three
small texts (alice29, progc, bib) and every file of the kinds set but zeros and random (the bench is not
the only test: a gain must hold on files the bench does not hold). ~4.7 MB; ~1 minute at level 8.

    PYTHONPATH=/path/to/old-checkout .venv/bin/python benchmarks/cm_sample.py run before.json [--level 8]
    .venv/bin/python benchmarks/cm_sample.py run after.json
    .venv/bin/python benchmarks/cm_sample.py compare before.json after.json
    .venv/bin/python benchmarks/cm_sample.py run small.json --level 2 --version 6 --prefix 4   # small inputs
    .venv/bin/python benchmarks/cm_sample.py report base.json tried1.json … --out benchmarks/results/cm-sample.md
(``run --what "…"`` says in words what the tree changes; ``report`` writes one line per change against the base,
or against the run a JSON's ``against`` field names by its file stem: a change tried on top of another.)
(``git worktree add /path/to/old-checkout REV`` gives the old tree; ``kinds_set.py`` makes the kinds set.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from common import BENCH, ROOT, write_json, write_md

KINDS = ROOT / "benchmarks" / "kinds-set"
# (bench file, KiB of it)
SAMPLE = [("canterbury_large/world192.txt", 512), ("canterbury_large/bible.txt", 512), ("calgary/book2", 256),
          ("calgary/news", 256), ("multilingual/xiyouji.txt", 384), ("multilingual/genji_all.txt", 256),
          ("multilingual/gogol.txt", 256), ("calgary/obj2", 256), ("calgary/geo", 256),
          ("canterbury/kennedy.xls", 256), ("calgary/pic", 256), ("canterbury/alice29.txt", 256),
          ("calgary/progc", 256), ("calgary/bib", 256)]


def inputs() -> list[tuple[str, bytes]]:
    """(name, bytes) of every file of the sample; the kinds set's names start with "kinds/"."""
    if not KINDS.is_dir():
        sys.exit(f"no kinds set at {KINDS}: run benchmarks/kinds_set.py first")
    out = [(f, (BENCH / f).read_bytes()[: kib * 1024]) for f, kib in SAMPLE]
    kinds = sorted(p for p in KINDS.iterdir() if p.name not in ("zeros", "random", "MANIFEST.json"))
    return out + [(f"kinds/{p.name}", p.read_bytes()) for p in kinds]


def run(level: int, what: str, version: int | None = None, prefix: int | None = None) -> dict:
    """Each file's compressed size at cm ``level`` (in cm ``version``, else the level's; ``prefix``: only the first
    that many KiB of each file, small inputs), and the seconds the whole sample took (one process)."""
    import lmzip
    from lmzip import cm

    print(f"lmzip from {lmzip.__file__}", file=sys.stderr)
    cm.compress(b"the compiled loop, loaded first " * 8, level, version=version)
    sizes, t0 = {}, time.perf_counter()
    for name, data in inputs():
        data = data[: prefix * 1024] if prefix else data
        sizes[name] = [len(data), len(cm.compress(data, level, version=version))]
        print(f"{name:32s} {sizes[name][0]:9,d} {sizes[name][1]:9,d}", file=sys.stderr, flush=True)
    return {"level": level, "version": version, "prefix_kib": prefix, "what": what,
            "seconds": round(time.perf_counter() - t0, 1), "sizes": sizes}


def bpb(doc: dict, keys: list[str]) -> float:
    """Bits per byte of a run over the files ``keys``."""
    return 8 * sum(doc["sizes"][k][1] for k in keys) / sum(doc["sizes"][k][0] for k in keys)


def parts(keys: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The sample's files split as the tables sum them: the bench part, the kinds set, all."""
    bench = [k for k in keys if not k.startswith("kinds/")]
    return bench, [k for k in keys if k not in bench], keys


def report(base: dict, tried: list[dict], names: list[str] | None = None) -> list[str]:
    """One row per tried change: bits per byte over the bench part, the kinds set and both, its change
    against the base (or against the run its ``against`` field names, a file stem of ``names``: a change
    tried on top of another), and its best and worst file."""
    keys = list(base["sizes"])
    split = parts(keys)
    by_name = dict(zip(names or [], tried, strict=False))
    out = [f"Counting alone (lmzip.cm) at level {base['level']} over benchmarks/cm_sample.py's sample (the first "
           "256-512 KB of 14 bench files and the kinds set but zeros and random), one process: each row one change "
           f"to the tree against the base ({base['what']}; {base['seconds']} s), or against the row it names.", "",
           "| change | bench part | kinds set | all | best file | worst file | seconds |",
           "|---|---:|---:|---:|---|---|---:|",
           "| (base) | " + " | ".join(f"{bpb(base, p):.4f}" for p in split) + f" | | | {base['seconds']} |"]
    for doc in tried:
        ref = by_name.get(doc.get("against", ""), base)
        cells = [f"{bpb(doc, p):.4f} ({100 * (bpb(doc, p) / bpb(ref, p) - 1):+.2f}%)" for p in split]
        ch = sorted((doc["sizes"][k][1] / ref["sizes"][k][1] - 1, k) for k in keys)
        ends = [f"{k.split('/')[-1]} {100 * c:+.2f}%" for c, k in (ch[0], ch[-1])]
        out.append(f"| {doc['what']} | " + " | ".join(cells + ends) + f" | {doc['seconds']} |")
    return out


def compare(before: dict, after: dict) -> list[str]:
    """Per file and over the bench part, the kinds part and both: bits per byte before and after, change."""
    def line(name: str, keys: list[str]) -> str:
        a, b = bpb(before, keys), bpb(after, keys)
        return f"| {name} | {a:.4f} | {b:.4f} | {100 * (b / a - 1):+.2f}% |"

    keys = sorted(before["sizes"].keys() & after["sizes"].keys(), key=list(before["sizes"]).index)
    rows = ["| file | before | after | change |", "|---|---:|---:|---:|"] + [line(k, [k]) for k in keys]
    sums = [line(name, p) for name, p in zip(("**bench part**", "**kinds set**", "**all**"), parts(keys), strict=True)]
    return rows + sums + [f"\nseconds: {before['seconds']} before, {after['seconds']} after"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out")
    r.add_argument("--level", type=int, default=8, help="the cm level (default 8: the default's counted blocks)")
    r.add_argument("--version", type=int, help="the cm version (default: the level's)")
    r.add_argument("--prefix", type=int, help="code only the first this many KiB of each file (small inputs)")
    r.add_argument("--what", default="this tree", help="what the tree changes, in words (report's row name)")
    c = sub.add_parser("compare")
    c.add_argument("before")
    c.add_argument("after")
    p = sub.add_parser("report")
    p.add_argument("base")
    p.add_argument("tried", nargs="+")
    p.add_argument("--out", type=Path, help="write the markdown here (else print it)")
    a = ap.parse_args()
    if a.cmd == "run":
        write_json(Path(a.out), run(a.level, a.what, a.version, a.prefix))
        return
    if a.cmd == "report":
        lines = report(json.loads(Path(a.base).read_text()), [json.loads(Path(f).read_text()) for f in a.tried],
                       [Path(f).stem for f in a.tried])
        if a.out:
            write_md(a.out, lines)
        else:
            print("\n".join(lines))
        return
    print("\n".join(compare(*(json.loads(Path(f).read_text()) for f in (a.before, a.after)))))


if __name__ == "__main__":
    main()
