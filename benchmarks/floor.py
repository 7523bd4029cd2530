"""Speed floors (issue 36): each level's speed on every file of the bench and the kinds set, in one
process and one thread, against `-1` on the same file and the level on alice29.txt.

For each level asked for, every file is compressed and decompressed whole (blocks of 4 MiB, as
`lmzip compress` cuts them), timed, and checked byte for byte; a warm-up codes 20 KB of prose first
(which the mixed coder wins) so compiled loops and the model load outside the timings. Reports per
file the KB/s both ways, the frames the level wrote (counted, mixed, coded, stored) and, where every
block ended counted, the time against `-1`'s; per level the slowest file against the level's speed
on alice29.txt. Writes benchmarks/results/floor.{json,md}.

    .venv/bin/python benchmarks/kinds_set.py                       # the kinds set, once
    .venv/bin/python benchmarks/floor.py --levels 1,4              # the default against -1
    LMZIP_INT8_GEMM=off .venv/bin/python benchmarks/floor.py --levels 4   # floor-int8-off.*: float32 products
    .venv/bin/python benchmarks/floor.py --levels 1,4 --files canterbury/alice29.txt,kinds/ru   # a sample
    ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 LMZIP_INT8_GEMM=onednn \
        .venv/bin/python benchmarks/floor.py --levels 4            # floor-avx2.*: the libraries of a CPU without VNNI
    .venv/bin/python benchmarks/floor.py --report                  # floor.md again from floor.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from common import BENCH, RESULTS, ROOT, cpu_model, write_json, write_md

KINDS = ROOT / "benchmarks" / "kinds-set"
ALICE = "canterbury/alice29.txt"
SMALL = 10_000  # bytes: below this a file's time is start-up, not speed


def inputs() -> list[tuple[str, Path]]:
    """The 42 bench files and the kinds set, by name."""
    files = [(str(p.relative_to(BENCH)), p) for p in sorted(BENCH.rglob("*")) if p.is_file()]
    files += [(f"kinds/{p.name}", p) for p in sorted(KINDS.iterdir()) if p.is_file() and p.suffix != ".json"]
    return files


def compressor(level: int):
    from lmzip.api import LMCompressor
    from lmzip.levels import LEVELS

    lv = LEVELS[level]
    if lv.model == "cm":
        return LMCompressor("cm", jobs=1, threads=1)
    return LMCompressor(lv.model, jobs=1, threads=1, **lv.options())


def measure(level: int, files: list[tuple[str, Path]]) -> list[dict]:
    """Every file through ``level``: seconds both ways, frames, checked."""
    lm = compressor(level)
    # the warm-up is prose the mixed coder wins on, so its compiled loops load here too (a warm-up that
    # counting won left their loading, ~2 s, to the first file the mixed coder ran on)
    lm.decompress(lm.compress((BENCH / ALICE).read_bytes()[:20_000]))
    rows = []
    for name, path in files:
        data = path.read_bytes()
        t0 = time.perf_counter()
        res = lm.compress_ex(data)
        t1 = time.perf_counter()
        back = lm.decompress(res.blob)
        t2 = time.perf_counter()
        kinds = sorted({"stored" if h.stored else "counted" if h.counting else "mixed" if h.mix else "coded"
                        for h in res.headers})
        row = {"level": level, "file": name, "bytes": len(data), "compressed": len(res.blob),
               "compress_s": round(t1 - t0, 3), "decompress_s": round(t2 - t1, 3), "frames": kinds,
               "verified": back == data}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def kbps(n: int, s: float) -> float:
    return n / 1e3 / max(s, 1e-6)


def cell(n: int, s: float) -> str:
    """KB/s as the table prints it; a time under the timer's millisecond (a stored frame read back) as such."""
    return f"{kbps(n, s):.1f}" if s >= 0.001 else "(< 1 ms)"


def report(rows: list[dict]) -> list[str]:
    """The table: per level its slowest file against alice29.txt, then every file."""
    by = {(r["level"], r["file"]): r for r in rows}
    levels = sorted({r["level"] for r in rows})
    lines = ["Speed floors (benchmarks/floor.py): every file of the bench and the kinds set, whole, in one "
             "process and one thread; KB/s = 1000 bytes of input per second.", "",
             "| level | alice29 KB/s (c / d) | slowest file | its KB/s (c / d) | share of alice29's | "
             "files under 15 KB/s | counted files: worst time against -1 |", "|---|---|---|---|---|---|---|"]
    for lv in levels:
        mine = [r for r in rows if r["level"] == lv]
        alice = by.get((lv, ALICE))
        slow = min((r for r in mine if r["bytes"] >= SMALL),
                   key=lambda r: min(kbps(r["bytes"], r["compress_s"]), kbps(r["bytes"], r["decompress_s"])))
        sc, sd = kbps(slow["bytes"], slow["compress_s"]), kbps(slow["bytes"], slow["decompress_s"])
        ac, ad = (kbps(alice["bytes"], alice["compress_s"]), kbps(alice["bytes"], alice["decompress_s"])) \
            if alice else (0.0, 0.0)
        under = sum(1 for r in mine if min(kbps(r["bytes"], r["compress_s"]),
                                           kbps(r["bytes"], r["decompress_s"])) < 15 and r["bytes"] >= SMALL)
        worst = ""
        if lv != 1:
            ratios = [((r["compress_s"] / by[(1, r["file"])]["compress_s"]), r["file"]) for r in mine
                      if r["frames"] == ["counted"] and (1, r["file"]) in by and r["bytes"] >= SMALL]
            if ratios:
                x, f = max(ratios)
                worst = f"{x:.1f}x ({f})"
        lines.append(f"| -{lv} | {ac:.1f} / {ad:.1f} | {slow['file']} | {sc:.1f} / {sd:.1f} | "
                     f"{min(sc / ac, sd / ad) if ac else 0:.2f} | {under} | {worst} |")
    lines += ["", "Files under 10 KB are left out of the summary (start-up, not speed, decides there).", "",
              "| file | bytes | " + " | ".join(f"-{lv} KB/s (c / d), frames" for lv in levels) + " |",
              "|---|---:|" + "---|" * len(levels)]
    for name in dict.fromkeys(r["file"] for r in rows):
        cells = []
        for lv in levels:
            r = by.get((lv, name))
            cells.append("" if r is None else f"{cell(r['bytes'], r['compress_s'])} / "
                         f"{cell(r['bytes'], r['decompress_s'])} {'+'.join(r['frames'])}"
                         + ("" if r["verified"] else " FAILED"))
        size = next(r["bytes"] for r in rows if r["file"] == name)
        lines.append(f"| {name} | {size:,} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="1,4")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--report", action="store_true", help="only rewrite floor.md from floor.json")
    ap.add_argument("--files", help="only these files (comma-separated names as the table prints them, "
                    "e.g. canterbury/alice29.txt,kinds/ru): a sample where the whole set takes hours")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.report:
        for name in ("floor", "floor-int8-off", "floor-avx2", "floor-avx2-native"):
            if (out / f"{name}.json").exists():
                done = json.loads((out / f"{name}.json").read_text())
                write(out, done["rows"], {k: v for k, v in done.items() if k != "rows"})
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
    files = inputs()
    if args.files:
        want = args.files.split(",")
        if missing := [n for n in want if n not in dict(files)]:
            ap.error(f"no such file in the bench or the kinds set: {missing[0]}")
        files = [f for f in files if f[0] in want]
    rows = []
    for lv in (int(x) for x in args.levels.split(",")):
        rows += measure(lv, files)
    from lmzip.arith import exact

    write(out, rows, {"cpu": torch.backends.cpu.get_cpu_capability(), "cpu_model": cpu_model(),
                      "int8_gemm": exact.int8_gemm(1024),
                      "kernel": exact.KERNEL, "isa": os.environ.get("ONEDNN_MAX_CPU_ISA", "")})


def stem(meta: dict) -> str:
    """floor; floor-avx2 where oneDNN was held to AVX2 (ONEDNN_MAX_CPU_ISA=AVX2, with the oneDNN kernel: what a
    CPU without VNNI runs, whose torch._int_mm takes a generic loop that no ISA cap shows here);
    floor-avx2-native on a CPU whose best is AVX2 (torch's capability; no cap); floor-int8-off where the
    float32 products ran by request (LMZIP_INT8_GEMM=off)."""
    if meta["cpu"].upper() == "AVX2" and not meta.get("isa"):
        return "floor-avx2-native"
    if not meta["int8_gemm"]:
        return "floor-int8-off"
    return "floor-avx2" if meta.get("isa", "").upper() == "AVX2" else "floor"


def write(out: Path, rows: list[dict], meta: dict) -> None:
    """floor.{json,md} (floor-avx2.* or floor-int8-off.*, see ``stem``)."""
    name = stem(meta)
    write_json(out / f"{name}.json", {**meta, "rows": rows})
    kernel = meta.get("kernel", "an int8 kernel" if meta["int8_gemm"] else "float32")
    text = report(rows) + ["", f"CPU {meta.get('cpu_model', '?')}, torch capability {meta['cpu']}, "
                               f"product kernel {kernel}."]
    write_md(out / f"{name}.md", text)
    print("\n".join(text[:8]))


if __name__ == "__main__":
    main()
