"""Replay a model's coded rows through the match models, to compare mixing designs quickly.

The static model's rows do not depend on the mixing, so each file is stepped once (as the codec
steps it: same segments, same batch) and its rows kept (4 bytes x vocabulary per token: ~0.8 GB
for alice29.txt); each mixer is then replayed over them. Ideal bits (Σ -log2 p of the mixed rows):
a tool for choosing settings, not the coded size (`lmzip bench` measures that). The per-segment
match model of formats 4-6 was removed with those formats; its figures stay in mix_replay.md.

    python benchmarks/mix_replay.py [--model gpt-wide] FILE... > benchmarks/results/mix_replay.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from lmzip.coding import codec
from lmzip.coding.legacy import match
from lmzip.coding.settings import Settings
from lmzip.models import registry


def model_rows(model, data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The file's segments, their lengths and every step's rows, computed by the codec's own step loop."""
    rows, B = [], [0]

    def keep(t: int, active: np.ndarray, counts: np.ndarray, sym: np.ndarray) -> None:
        B[0] = max(B[0], len(active))
        rows.append((active, counts.copy(), sym))

    tokens, _, layout = codec.trace(data, model, Settings(), keep)  # as `lmzip compress` codes statically
    segs = layout.segments(np.asarray(tokens))
    full = np.zeros((len(rows), len(layout.lengths), rows[0][1].shape[1]), dtype=np.float32)
    for t, (active, counts, _) in enumerate(rows):
        full[t, active] = counts
    return segs, layout.lengths, full


def replay(module, segs: np.ndarray, lengths: np.ndarray, rows: np.ndarray) -> float:
    """Ideal bits of coding the segments with ``module``'s match model mixed in (None: the model alone)."""
    toks = np.zeros_like(segs)
    mixer = module.MatchMixer(toks, lengths) if module else None
    bits = 0.0
    for t in range(segs.shape[1]):
        active = np.flatnonzero(lengths > t)
        p = rows[t][active]
        if mixer:
            p = mixer.mix(t, active, p)
        sym = segs[active, t]
        bits -= float(np.log2((p[np.arange(len(active)), sym] + 1) / (1 << 24)).sum())
        toks[active, t] = sym
        if mixer:
            mixer.update(t, active)
    return bits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="gpt-wide")
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args()
    model = registry.load(args.model)
    designs = {"model alone": None, "file-wide match model": match}
    print(f"Ideal bits per byte, {args.model}'s rows replayed (benchmarks/mix_replay.py)\n")
    print("| file | bytes | " + " | ".join(designs) + " |\n|---|---:|" + "---:|" * len(designs))
    total = dict.fromkeys(designs, 0.0)
    for f in args.files:
        data = f.read_bytes()
        segs, lengths, rows = model_rows(model, data)
        bpb = {k: replay(m, segs, lengths, rows) / len(data) for k, m in designs.items()}
        print(f"| {f.name} | {len(data):,} | " + " | ".join(f"{v:.3f}" for v in bpb.values()) + " |", flush=True)
        for k in designs:
            total[k] += bpb[k] / len(args.files)
    print("| mean | | " + " | ".join(f"{v:.3f}" for v in total.values()) + " |")


if __name__ == "__main__":
    main()
