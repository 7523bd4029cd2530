"""Level -9 against PPMd order 8 on the binary slices issue 24 names: real .lmz round trips through the
command line (compressor and decompressor in separate processes), every byte compared.
Writes benchmarks/results/binaries.{json,md}.

    .venv/bin/python benchmarks/binaries.py [--level 9]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from common import BENCH, RESULTS, ROOT, write_json, write_md

SLICES = {  # name -> (file, first byte, end)
    "geo": ("calgary/geo", 0, None),
    "obj1": ("calgary/obj1", 0, None),
    "sum": ("canterbury/sum", 0, None),
    "kennedy.xls, first 30 KB": ("canterbury/kennedy.xls", 0, 30_000),
    "ptt5, bytes 120,000-150,000": ("canterbury/ptt5", 120_000, 150_000),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", type=int, default=9)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    from lmzip.bench.compressors import Ppmd

    lmzip = [str(ROOT / ".venv" / "bin" / "lmzip")]
    ppmd, rows = Ppmd(8), []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (f, a, b) in SLICES.items():
            data = (BENCH / f).read_bytes()[a:b]
            src = Path(tmp) / "in.bin"
            src.write_bytes(data)
            t0 = time.perf_counter()
            subprocess.run([*lmzip, f"-{args.level}", "-q", "-f", "-k", str(src)], check=True)
            t1 = time.perf_counter()
            back = subprocess.run([*lmzip, "-d", "-c", "-q", str(src) + ".lmz"], check=True, capture_output=True).stdout
            t2 = time.perf_counter()
            size = (Path(tmp) / "in.bin.lmz").stat().st_size
            head = subprocess.run([*lmzip, "list", str(src) + ".lmz"], capture_output=True, text=True).stdout
            p = len(ppmd.compress(data))
            rows.append({"slice": name, "bytes": len(data), "lmzip": size, "ppmd_o8": p, "exact": back == data,
                         "compress_s": t1 - t0, "decompress_s": t2 - t1, "list": head.strip()})
            print(f"{name}: {len(data)} bytes, -{args.level} {size}, ppmd-o8 {p}, exact {back == data}", flush=True)
    out = Path(args.out)
    write_json(out / "binaries.json", {"level": args.level, "rows": rows})
    lines = [f"`lmzip -{args.level}` against PPMd order 8 (256 MiB, pyppmd) on binary slices (benchmarks/binaries.py): "
             "whole .lmz files, compressed and decompressed in separate processes, every byte compared. Each block "
             "keeps the smaller of the model mixed with counting and counting alone.", "",
             f"| slice | bytes | lmzip -{args.level} | bpb | ppmd-o8 | bpb | smaller | exact | compress s "
             "| decompress s |",
             "|---|---:|---:|---:|---:|---:|---|---|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['slice']} | {r['bytes']:,} | {r['lmzip']:,} | {8 * r['lmzip'] / r['bytes']:.3f} | "
                     f"{r['ppmd_o8']:,} | {8 * r['ppmd_o8'] / r['bytes']:.3f} | "
                     f"{'lmzip' if r['lmzip'] < r['ppmd_o8'] else 'ppmd'} | {'yes' if r['exact'] else 'NO'} | "
                     f"{r['compress_s']:.1f} | {r['decompress_s']:.1f} |")
    write_md(out / "binaries.md", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
