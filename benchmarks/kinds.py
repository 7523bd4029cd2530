"""Bits per byte per kind of text: each model on the first bytes of every kind's validation file.

Real round trips (compress, decompress, compare) on held-out text the models never trained on: the
mix's validation files (English books, Japanese, Chinese, Russian, European novels, code, markup),
beside xz -9e and PPMd order 8 on the same bytes. This is the per-kind table of the models issue.

    python benchmarks/kinds.py --models gpt-wide,lstm-wide --limit 65536

Writes benchmarks/results/kinds.{json,md} (``--out`` to change); rows of other models are kept.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import RESULTS, ROOT

from lmzip.api import LMCompressor
from lmzip.bench.compressors import Ppmd, Xz
from lmzip.models import datamix
from lmzip.models.data import read_bytes


def samples(mix: datamix.Mixture, limit: int) -> dict[str, bytes]:
    """The first ``limit`` bytes of each kind's validation text (cut at a line end)."""
    out = {}
    for s in mix.sources:
        if not s.valid:
            continue
        data = read_bytes(Path(s.valid[0]))[:limit]
        out[s.name] = data[: data.rfind(b"\n") + 1] or data
    return out


def measure(name: str, codec, texts: dict[str, bytes]) -> dict:
    """Bits per byte per kind, verified, with the KB/s of the whole pass."""
    row, t0, total = {"name": name, "kinds": {}}, time.time(), 0
    for kind, data in texts.items():
        blob = codec.compress(data)
        assert codec.decompress(blob) == data, f"{name} on {kind}: round trip failed"
        row["kinds"][kind] = round(8 * len(blob) / len(data), 4)
        total += len(data)
    row["kb_s"] = round(total / 1000 / (time.time() - t0), 1)
    return row


class Lm:
    """lmzip with one model and mode, one process, one thread."""

    def __init__(self, model: str, mix: bool):
        self.c = LMCompressor(model, jobs=1, threads=1, mix=mix)

    def compress(self, data: bytes) -> bytes:
        return self.c.compress_ex(data).blob

    def decompress(self, blob: bytes) -> bytes:
        return self.c.decompress(blob)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mix", default=str(ROOT / "corpora/mixes/all-kinds.toml"))
    ap.add_argument("--models", default="gpt-wide,lstm-wide", help="models (name or folder); NAME+mix for --mix")
    ap.add_argument("--limit", type=int, default=65536)
    ap.add_argument("--classic", action="store_true", help="also measure xz -9e and PPMd order 8")
    ap.add_argument("--out", default=str(RESULTS / "kinds"))
    args = ap.parse_args()
    texts = samples(datamix.load_mixture(args.mix), args.limit)
    out = Path(args.out)
    old = json.loads(out.with_suffix(".json").read_text())["rows"] if out.with_suffix(".json").exists() else []
    rows = {r["name"]: r for r in old}
    todo = [(m, Lm(m.removesuffix("+mix"), m.endswith("+mix"))) for m in args.models.split(",") if m]
    if args.classic:
        todo = [("xz -9e", Xz()), ("ppmd-o8", Ppmd(8))] + todo
    for name, codec in todo:
        rows[name] = measure(name, codec, texts)
        print(json.dumps(rows[name]), flush=True)
    kinds = list(texts)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"limit": args.limit, "rows": list(rows.values())}, indent=1))
    lines = [f"Bits per byte on the first {args.limit // 1024} KiB of each kind's validation file of "
             f"`{Path(args.mix).name}` (held-out text; real round trips, one process, one thread).", "",
             "| compressor | " + " | ".join(kinds) + " | KB/s |", "|---|" + "---:|" * (len(kinds) + 1)]
    for r in rows.values():
        lines.append(f"| {r['name']} | " + " | ".join(f"{r['kinds'].get(k, float('nan')):.3f}" for k in kinds)
                     + f" | {r['kb_s']} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
