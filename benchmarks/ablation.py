"""What each input of the context mixing adds, per kind of file: counting with one group of inputs
silenced at a time (lmzip.cm.model's OFF_* bits: the mixers see 0 from it), then the language model
mixed in (lmzip.coding.mix, on its own), what --mix writes (each file the smaller of that and
counting alone) and the language model alone. Bits per byte of the payloads over the first LIMIT
bytes of bench files grouped by kind; writes benchmarks/results/ablation.{json,md}.

    .venv/bin/python benchmarks/ablation.py [--limit 100000] [--model gpt-wide]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from common import BENCH, RESULTS, write_json, write_md

KINDS = {
    "English prose": ["canterbury/alice29.txt", "canterbury/asyoulik.txt"],
    "source code": ["calgary/progc", "calgary/progp", "canterbury/fields.c"],
    "markup": ["canterbury/cp.html", "enwik/enwik5"],
    "records": ["calgary/bib", "calgary/trans"],
    "binary": ["calgary/geo", "calgary/obj2", "canterbury/kennedy.xls", "canterbury/ptt5"],
    "Russian, Chinese": ["multilingual/gogol.txt", "multilingual/xiyouji.txt"],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=100_000, help="bytes of each file")
    ap.add_argument("--model", default="gpt-wide")
    ap.add_argument("--level", type=int, default=7, help="counting level (its tables; from 7 on the newest models)")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)  # before the minutes of coding, not after them
    from lmzip.cm import model as cm
    from lmzip.cm.format import HEAVY
    from lmzip.coding import codec
    from lmzip.coding.settings import Settings
    from lmzip.models import registry

    variants = {"counting, every input": 0, "- orders 0-6": cm.OFF_ORDERS, "- words": cm.OFF_WORDS,
                "- sparse": cm.OFF_SPARSE, "- records and columns": cm.OFF_RECORDS,
                "- bilevel image": cm.OFF_IMAGE, "- match": cm.OFF_MATCH,
                "- SSE (APM stages)": cm.OFF_SSE}
    if args.level >= HEAVY:  # cm version 3's models (version 4 has them too)
        variants |= {"- run": cm.OFF_RUN, "- indirect": cm.OFF_INDIRECT,
                     "- clauses, line key and letters": cm.OFF_CLAUSES, "- character groups": cm.OFF_GROUPS,
                     "- fields and phrases": cm.OFF_FIELDS}
    lm = registry.load(args.model)
    mixed, alone, best = (f"+ language model ({args.model}), mixed in", f"--mix ({args.model}): the smaller of "
                          "that and counting", f"language model alone ({args.model})")
    bits: dict[str, dict[str, int]] = {}  # row -> file -> payload bits
    seconds: dict[str, float] = {}
    for f in (f for files in KINDS.values() for f in files):
        data = (BENCH / f).read_bytes()[: args.limit]
        src = np.frombuffer(data, dtype=np.uint8)
        for name, off in variants.items():
            t0 = time.perf_counter()
            bits.setdefault(name, {})[f] = 8 * len(cm.run(True, src, len(data), cm.allocate(args.level), off))
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t0
        for name, st in ((mixed, Settings(mix=True)), (best, Settings())):
            t0 = time.perf_counter()
            blob, head, _ = codec.encode(data, lm, st, workers=1)
            bits.setdefault(name, {})[f] = 8 * (len(blob) - head.size)  # the payload, as cm.run's
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - t0
        bits.setdefault(alone, {})[f] = min(bits[mixed][f], bits["counting, every input"][f])
        print(f"{f}: done", flush=True)
    bits = {k: bits[k] for k in [*variants, mixed, alone, best]}
    sizes = {f: len((BENCH / f).read_bytes()[: args.limit]) for files in KINDS.values() for f in files}
    rows = {name: {kind: [sum(per[f] for f in files), sum(sizes[f] for f in files)] for kind, files in KINDS.items()}
            for name, per in bits.items()}
    out = Path(args.out)
    write_json(out / "ablation.json", {"limit": args.limit, "model": args.model, "level": args.level,
                                       "kinds": KINDS, "bits": bits, "bytes": sizes, "seconds": seconds})
    base = rows["counting, every input"]
    lines = [f"What each input adds (benchmarks/ablation.py): bits per byte over the first {args.limit:,} bytes of "
             f"each file, payload only, counting tables of level {args.level}. A row with \"-\" silences one group "
             "of counting inputs (its change against every input in brackets: what that input adds); \"+ language "
             "model\" mixes the shipped model in, bit by bit (lmzip.coding.mix, on its own); --mix keeps, per "
             "file here (per block in a file), the smaller of that and counting alone; the last row is the model "
             "alone (8.000: stored). Seconds: one process on a shared 2-core machine.",
             "", "| | " + " | ".join(KINDS) + " | seconds |", "|---|" + "---:|" * (len(KINDS) + 1)]
    for name, per in rows.items():
        cells = []
        for kind in KINDS:
            bpb = per[kind][0] / per[kind][1]
            ref = base[kind][0] / base[kind][1]
            cells.append(f"{bpb:.3f}" if per is base else f"{bpb:.3f} ({100 * (bpb / ref - 1):+.1f}%)")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {f'{seconds[name]:.0f}' if name in seconds else '–'} |")
    lines += ["", "Files: " + "; ".join(f"{k}: {', '.join(Path(f).name for f in v)}" for k, v in KINDS.items()) + "."]
    write_md(out / "ablation.md", lines)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
