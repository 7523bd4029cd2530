"""The levels -1 … -9 as a frontier (issue 36): each level's size over a sample of every kind of input,
its speed both ways on alice29.txt and its peak memory, each level in a process of its own, one thread.

`sizes` compresses the first 64 KB of every file of the 42 bench files and the kinds set (54 files; a
sample, so the slowest levels fit in minutes: -9 codes ~2 KB/s) and sums the bytes; `speed` runs each
level on the whole of alice29.txt in a fresh process (compress, then decompress and compare) and reads
the process's peak resident memory; `report` writes benchmarks/results/levels.{json,md} and
lmzip/weights/levels.json, the table `lmzip models` and the README print. A level is a point of the
frontier where it writes fewer bytes over the sample than every faster level and is no faster than the
level below it (within the ~10% one measurement varies on a shared VM).

    .venv/bin/python benchmarks/levels.py sizes --levels 9,2,3,4 &    # two halves side by side: sizes
    .venv/bin/python benchmarks/levels.py sizes --levels 8,7,6,5,1    # do not depend on the machine's load
    .venv/bin/python benchmarks/levels.py speed                       # alone: seconds and memory
    LMZIP_INT8_GEMM=off .venv/bin/python benchmarks/levels.py speed --levels 2,3,4,5,6   # float32 products
    ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 LMZIP_INT8_GEMM=onednn \
        .venv/bin/python benchmarks/levels.py speed --levels 2,3,4,5,6  # the libraries of a CPU without VNNI
    .venv/bin/python benchmarks/levels.py report
    .venv/bin/python benchmarks/levels.py counting                    # alone: cm-1 … cm-9, tables and memory
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from common import BENCH, ROOT, cpu_model, peak_mib, write_json, write_md
from common import RESULTS as OUT

RUNS = ROOT / "runs" / "levels"
SAMPLE = 65536  # bytes from the start of each file
ALICE = BENCH / "canterbury" / "alice29.txt"


def _one_thread(torch_too: bool = True) -> None:
    """One thread; torch is set only where a model runs (counting alone never imports it)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if torch_too:
        import torch

        torch.set_num_threads(1)


def compressor(n: int):
    """Level ``n`` as `lmzip -N` codes, one job and one thread."""
    from lmzip.api import LMCompressor
    from lmzip.levels import LEVELS

    lv = LEVELS[n]
    return LMCompressor(lv.model, jobs=1, threads=1, **(lv.options() if lv.model != "cm" else {}))


def sizes(levels: list[int]) -> None:
    """Every level's compressed size of the sample, file by file (runs/levels/sizes-N.json)."""
    from floor import inputs  # benchmarks/: the script's own folder

    _one_thread()
    RUNS.mkdir(parents=True, exist_ok=True)
    for n in levels:
        lm, files, t0 = compressor(n), {}, time.perf_counter()
        for name, path in inputs():
            data = path.read_bytes()[:SAMPLE]
            files[name] = {"bytes": len(data), "compressed": len(lm.compress(data))}
        total = sum(f["bytes"] for f in files.values())
        out = sum(f["compressed"] for f in files.values())
        row = {"level": n, "bytes": total, "compressed": out, "bpb": 8 * out / total,
               "seconds": round(time.perf_counter() - t0, 1), "files": files}
        write_json(RUNS / f"sizes-{n}.json", row)
        print(f"-{n}: {out:,} of {total:,} bytes, {row['bpb']:.4f} bpb", flush=True)


def _timed(compress, decompress) -> dict:
    """alice29.txt both ways, after a warm-up of its first 5 KB (what loads or compiles first stays outside the
    timings): its sizes, seconds and whether it came back."""
    data = ALICE.read_bytes()
    decompress(compress(data[:5000]))
    t0 = time.perf_counter()
    blob = compress(data)
    t1 = time.perf_counter()
    ok = decompress(blob) == data
    t2 = time.perf_counter()
    return {"bytes": len(data), "compressed": len(blob), "compress_s": t1 - t0, "decompress_s": t2 - t1, "verified": ok}


def _child(cmd: str, n: int) -> dict:
    """The JSON line a child process of this script prints for ``cmd`` at level ``n``."""
    res = subprocess.run([sys.executable, __file__, cmd, str(n)], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(res.stdout.strip().splitlines()[-1])


def speed_child(n: int) -> None:
    """In a process of its own: level ``n`` on alice29.txt both ways, after a warm-up of its first 5 KB (the
    model and compiled loops load outside the timings; the peak memory counts everything); prints one JSON line."""
    from lmzip.levels import LEVELS

    _one_thread(LEVELS[n].model != "cm")
    lm = compressor(n)
    row = _timed(lm.compress, lm.decompress)
    peak = int(peak_mib())  # before anything more is imported
    int8 = None
    if LEVELS[n].model != "cm":
        from lmzip.arith import exact

        int8 = exact.int8_gemm(1024)
    print(json.dumps({"level": n, **row, "int8_gemm": int8, "peak_mib": peak,
                      "isa": os.environ.get("ONEDNN_MAX_CPU_ISA", "")}))


def speed(levels: list[int]) -> None:
    """Each level's speed and peak memory on alice29.txt (runs/levels/speed-N.json), one process each."""
    RUNS.mkdir(parents=True, exist_ok=True)
    for n in levels:
        row = _child("speed-child", n)
        suffix = "-int8-off" if row["int8_gemm"] is False else "-avx2" if row["isa"].upper() == "AVX2" else ""
        write_json(RUNS / f"speed-{n}{suffix}.json", row)
        print(f"-{n}{suffix}: {row['bytes'] / 1e3 / row['compress_s']:.1f} / "
              f"{row['bytes'] / 1e3 / row['decompress_s']:.1f} KB/s, {row['peak_mib']} MiB", flush=True)


def counting_child(n: int) -> None:
    """In a process of its own: counting alone at cm level ``n`` on alice29.txt both ways (`_timed`); prints one JSON
    line (its tables, its peak memory)."""
    from lmzip import cm
    from lmzip.cm.format import version_for

    row = _timed(lambda d: cm.compress(d, n), cm.decompress)
    tables = cm.table_bytes(n, version_for(n), row["bytes"])  # the tables this input gets (cm version 15: by length)
    print(json.dumps({"level": n, "version": version_for(n), **row, "tables_mib": round(tables / 2**20, 1),
                      "largest_mib": round(cm.table_bytes(n) / 2**20, 1), "peak_mib": int(peak_mib())}))


def _median_row(runs: list[dict]) -> dict:
    """One level's runs as one row: the median seconds each way (this VM wanders by a fifth between runs) and the
    range of KB/s, the largest peak memory."""
    row = dict(runs[0])
    for k in ("compress_s", "decompress_s"):
        secs = sorted(r[k] for r in runs)
        row[k] = secs[len(secs) // 2]
        row[k.replace("_s", "_kbps_range")] = [round(row["bytes"] / 1e3 / t, 1) for t in (secs[-1], secs[0])]
    row["peak_mib"] = max(r["peak_mib"] for r in runs)
    row["verified"] = all(r["verified"] for r in runs)
    row["runs"] = len(runs)
    return row


def counting(levels: list[int], runs: int = 3) -> None:
    """Counting alone at each cm level (cm-1 … cm-9: -1 is cm-6) on alice29.txt, a process each, ``runs`` rounds over
    the levels (the median each way): results/counting-levels.{json,md}; with NUMBA_CPU_NAME set (numba's code for
    another CPU class, e.g. haswell: AVX2 without AVX-512) results/counting-levels-NAME.{json,md}."""
    target = os.environ.get("NUMBA_CPU_NAME", "")
    name = f"counting-levels-{target}" if target else "counting-levels"
    code = f"; numba's code for {target}" if target else ""
    seen: dict[int, list[dict]] = {n: [] for n in levels}
    for _ in range(runs):
        for n in levels:
            seen[n].append(_child("counting-child", n))
            print(seen[n][-1], flush=True)
    rows = [_median_row(seen[n]) for n in levels]
    write_json(OUT / f"{name}.json", {"file": "canterbury/alice29.txt", "cpu": cpu_model(), "numba_cpu": target,
                                      "rows": rows})
    lines = [f"Counting alone (lmzip.cm) at each level, `-m cm-N` (-1 is cm-6), on alice29.txt whole: one process "
             f"each, one thread, after a 5 KB warm-up, {runs} rounds over the levels, the median each way and the "
             f"range ({cpu_model()}{code}; benchmarks/levels.py counting). Tables: what alice29.txt gets, and the "
             f"level's largest (cm version 15 on fits its hashed table to the input).", "",
             "| cm level | cm version | tables MiB (largest) | peak MiB | bpb (alice29) | KB/s c / d (median) "
             "| range c; d | round trip |",
             "|---|---:|---:|---:|---:|---|---|:-:|"]
    for r in rows:
        kbps = [r["bytes"] / 1e3 / r[k] for k in ("compress_s", "decompress_s")]
        tables = f"{r['tables_mib']:,.1f} ({r.get('largest_mib', r['tables_mib']):,.1f})"
        span = "; ".join("{}-{}".format(*r[k]) for k in ("compress_kbps_range", "decompress_kbps_range"))
        lines.append(f"| cm-{r['level']} | {r['version']} | {tables} | {r['peak_mib']:,} | "
                     f"{8 * r['compressed'] / r['bytes']:.3f} | {kbps[0]:.1f} / {kbps[1]:.1f} | {span} | "
                     f"{'✓' if r['verified'] else '✗'} |")
    write_md(OUT / f"{name}.md", lines)
    print("\n".join(lines))


def _load(name: str) -> dict | None:
    path = RUNS / name
    return json.loads(path.read_text()) if path.exists() else None


def report() -> None:
    """results/levels.{json,md} and lmzip/weights/levels.json from the runs."""
    from lmzip.levels import LEVELS
    from lmzip.models import registry

    rows, shipped = [], {}
    committed, shipped_before = OUT / "levels.json", registry.SHIPPED / "levels.json"
    before = {r["level"]: r for r in json.loads(committed.read_text())["rows"]} if committed.exists() else {}
    old = json.loads(shipped_before.read_text()) if shipped_before.exists() else {}
    for n, lv in LEVELS.items():
        sz, sp, off = _load(f"sizes-{n}.json"), _load(f"speed-{n}.json"), _load(f"speed-{n}-int8-off.json")
        avx2 = _load(f"speed-{n}-avx2.json")
        if not (sz and sp):  # not measured again: the committed row stays, marked as older than the others
            if n in before:
                rows.append({**before[n], "older": True})
                shipped[n] = old.get(str(n), {})
            continue
        kbps = [sp["bytes"] / 1e3 / sp[k] for k in ("compress_s", "decompress_s")]
        row = {"level": n, "model": lv.model, "mode": lv.what or "-", "bpb": round(sz["bpb"], 4),
               "sample_bytes": sz["bytes"], "compressed": sz["compressed"],
               "alice_bpb": 8 * sp["compressed"] / sp["bytes"],
               "compress_kbps": round(kbps[0], 1), "decompress_kbps": round(kbps[1], 1), "peak_mib": sp["peak_mib"]}
        for key, run in (("int8_off_kbps", off), ("avx2_kbps", avx2)):
            if run:
                row[key] = [round(run["bytes"] / 1e3 / run[k], 1) for k in ("compress_s", "decompress_s")]
        rows.append(row)
        shipped[n] = {"bpb": round(sz["bpb"], 4), "compress_kbps": row["compress_kbps"],
                      "decompress_kbps": row["decompress_kbps"], "peak_mib": sp["peak_mib"],
                      "file": f"the first {SAMPLE // 1024} KB of the bench and kinds files; KB/s on alice29.txt"}
    write_json(OUT / "levels.json", {"sample": SAMPLE, "rows": rows})
    lines = [f"The levels (benchmarks/levels.py): bits per byte over the first {SAMPLE // 1024} KB of each of the 42 "
             "bench files and the kinds set (54 files); KB/s and peak memory on alice29.txt, whole, each level in a "
             "process of its own, one thread.", "",
             "| level | model | mode | bpb (sample) | bpb (alice29) | KB/s c / d | AVX2: KB/s c / d "
             "| float32: KB/s c / d | peak MiB |",
             "|---|---|---|---:|---:|---|---|---|---:|"]
    for r in rows:
        off, avx2 = r.get("int8_off_kbps"), r.get("avx2_kbps")
        mark = " †" if r.get("older") else ""
        lines.append(f"| -{r['level']}{mark} | {r['model']} | {r['mode']} | {r['bpb']:.4f} | {r['alice_bpb']:.3f} | "
                     f"{r['compress_kbps']:.1f} / {r['decompress_kbps']:.1f} | "
                     f"{f'{avx2[0]:.1f} / {avx2[1]:.1f}' if avx2 else '–'} | "
                     f"{f'{off[0]:.1f} / {off[1]:.1f}' if off else '–'} | {r['peak_mib']:,} |")
    if any(r.get("older") for r in rows):
        lines += ["", "† not measured again with the others: the row an earlier build measured (`levels.py` without "
                  "that level's sizes and speed runs keeps it)."]
    lines += ["", "Counting alone at each cm level, tables and peak memory: [counting-levels.md](counting-levels.md)"]
    write_md(OUT / "levels.md", lines)
    write_json(registry.SHIPPED / "levels.json", shipped)
    print("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=["sizes", "speed", "speed-child", "counting", "counting-child", "report"])
    ap.add_argument("level", nargs="?", type=int)
    ap.add_argument("--levels", default="1,2,3,4,5,6,7,8,9")
    ap.add_argument("--runs", type=int, default=3, help="counting: rounds over the levels (the median each way)")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    {"sizes": lambda: sizes(levels), "speed": lambda: speed(levels), "speed-child": lambda: speed_child(args.level),
     "counting": lambda: counting(levels, args.runs), "counting-child": lambda: counting_child(args.level),
     "report": report}[args.cmd]()


if __name__ == "__main__":
    main()
