"""Learning while compressing, seen: bits per byte over the position in a file for static, mixed,
adaptive and adaptive+mixed coding, Transformer and LSTM, and a byte preset learning from seeded
random weights (the costs the coder really pays, per token).

    .venv/bin/python benchmarks/learning_curve.py [FILE] [--models gpt-wide,lstm-wide] [--scratch lstm-nano]
Writes benchmarks/results/learning_curve.{png,json}.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from common import RESULTS, ROOT


def curve(ex, bins: int) -> tuple[list[float], list[float]]:
    """Bits per byte in ``bins`` equal slices of the file (by byte offset)."""
    nbytes = np.array([len(p) for p in ex.pieces], dtype=np.float64)
    ends = np.cumsum(nbytes)
    idx = np.minimum((ends - 1) * bins // ends[-1], bins - 1).astype(int)
    bits = np.bincount(idx, weights=ex.bits, minlength=bins)
    byts = np.bincount(idx, weights=nbytes, minlength=bins)
    centres = ((np.arange(bins) + 0.5) * ends[-1] / bins).tolist()
    return centres, (bits / np.maximum(byts, 1)).tolist()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=str(ROOT / "corpora" / "canterbury" / "alice29.txt"))
    ap.add_argument("--models", default="gpt-wide,lstm-wide")
    ap.add_argument("--scratch", default="lstm-nano", help="byte presets learning from scratch ('' for none)")
    ap.add_argument("--bins", type=int, default=30)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lmzip.coding.settings import Settings
    from lmzip.explain.analysis import explain
    from lmzip.models import registry

    data = Path(args.file).read_bytes()
    modes = {"static": Settings.make(), "mix": Settings.make(mix=True), "adapt": Settings.make(adapt=True),
             "adapt+mix": Settings.make(adapt=True, mix=True)}  # what `lmzip compress` uses

    runs = [(registry.load(n), mode, st, None) for n in args.models.split(",") for mode, st in modes.items()]
    for n in filter(None, args.scratch.split(",")):  # the +scratch benchmark rows' settings
        runs.append((registry.scratch(n, 0), "scratch", Settings.make(adapt=True, seed=0), None))
    results = {}
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for model, mode, settings, seg in runs:
        name = model.name
        ex = explain(data, model, segment=seg, top_k=0, settings=settings)
        x, y = curve(ex, args.bins)
        results[f"{name} {mode}"] = {"bpb": ex.bits_per_byte, "x": x, "y": y}
        print(f"{name:12s} {mode:9s} {ex.bits_per_byte:.4f} bits per byte", flush=True)
        ax.plot(np.array(x) / 1000, y, ("-" if name.startswith("gpt") else ":" if "nano" in name else "--"),
                label=f"{name} {mode} ({ex.bits_per_byte:.3f})")
    ax.set_xlabel(f"position in {Path(args.file).name} (KB)")
    ax.set_ylabel("bits per byte in that slice")
    ax.set_title("learning while compressing: static, +mix, +adapt, +adapt+mix, from scratch")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "learning_curve.png", dpi=110)
    (out / "learning_curve.json").write_text(json.dumps({"file": Path(args.file).name, "curves": results}) + "\n")


if __name__ == "__main__":
    main()
