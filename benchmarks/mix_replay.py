"""Replay a model's coded rows through the match models, to compare mixing designs quickly.

The static model's rows do not depend on the mixing, so each file is stepped once (as the codec
steps it: same segments, same batch) and its rows kept (4 bytes x vocabulary per token: ~0.8 GB
for alice29.txt); each mixer is then replayed over them. Ideal bits (Σ -log2 p of the mixed rows):
a tool for choosing settings, not the coded size (`lmzip bench` measures that).

    python benchmarks/mix_replay.py [--model gpt-wide] FILE... > benchmarks/results/mix_replay.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from lmzip import codec, mix, mix_v6, registry, transform


def model_rows(model, data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The file's segments, their lengths and every step's rows, computed by the codec's own step loop."""
    tokens = np.array(model.tokenizer.encode(transform.prepare(data)[0]))
    lengths = codec._layout(len(tokens), codec.segment_length(len(tokens)))
    segs = codec._segments(tokens, lengths)
    rows = []

    def keep(t: int, active: np.ndarray, probs: np.ndarray) -> np.ndarray:
        rows.append(np.zeros((len(lengths), probs.shape[1]), dtype=np.float32))
        rows[-1][active] = probs
        return segs[active, t]

    settings = codec.Settings(dtype=codec.default_dtype("cpu", False))  # as `lmzip compress` codes statically
    with codec.computation(settings):
        codec._lockstep(model, lengths, settings, keep, None)
    return segs, lengths, np.stack(rows)


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
        bits -= float(np.log2(p[np.arange(len(active)), sym] / p.sum(1)).sum())
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
    designs = {"model alone": None, "per-segment (format 4-6)": mix_v6, "file-wide (format 7)": mix}
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
