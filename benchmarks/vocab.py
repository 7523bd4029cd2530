"""Tokenizers for every kind of text: bytes per token of BPEs learned on a training mix, per kind.

Learns ``ubpe<N>`` (pieces along UTF-8 characters) and ``bpe<N>`` (GPT-2's pieces over latin-1
symbols, as the shipped models use) on the same weighted sample of the mix, then counts bytes per
token on each kind's validation files and on the benchmark files. More bytes per token means fewer
steps of the model per byte: faster coding, and a longer reach for the same context in tokens.

    python benchmarks/vocab.py --mix corpora/mixes/all-kinds.toml --specs bpe4096,ubpe4096,ubpe8192

Writes benchmarks/results/vocab.{json,md}; the learned tokenizers go to runs/tokenizers/.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from common import BENCH as SHARED_BENCH
from common import RESULTS, ROOT

from lmzip.models import datamix, registry
from lmzip.models.data import read_bytes
from lmzip.models.train import prepare_tokenizer

BENCH = {  # benchmark files by kind (the team's full benchmark corpus; the CJK files are not bundled)
    "english": ["canterbury/alice29.txt", "calgary/book1", "calgary/paper1"],
    "code": ["canterbury/fields.c", "canterbury/grammar.lsp", "calgary/progc", "calgary/progp"],
    "markup": ["canterbury/cp.html", "canterbury/xargs.1", "calgary/bib"],
    "ja (genji)": ["multilingual/genji_all.txt"],
    "zh (xiyouji)": ["multilingual/xiyouji.txt"],
    "ru (gogol)": ["multilingual/gogol.txt"],
}
LIMIT = 1 << 20  # bytes of each file measured


def bytes_per_token(tok, files: list[Path]) -> float:
    """Bytes over tokens of the files' first LIMIT bytes each (every tokenization round-trips)."""
    n_bytes = n_tok = 0
    for f in files:
        data = read_bytes(f)[:LIMIT]
        ids = tok.encode(data)
        assert tok.decode(ids) == data
        n_bytes, n_tok = n_bytes + len(data), n_tok + len(ids)
    return n_bytes / max(1, n_tok)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mix", default=str(ROOT / "corpora/mixes/all-kinds.toml"))
    ap.add_argument("--specs", default="bpe4096,ubpe4096,ubpe8192,ubpe16384")
    ap.add_argument("--sample-mb", type=int, default=24)
    ap.add_argument("--out", default=str(RESULTS / "vocab"))
    args = ap.parse_args()
    mix = datamix.load_mixture(args.mix)
    shipped = registry.load(registry.DEFAULT_MODEL).tokenizer
    rows = []
    for spec in ["shipped"] + args.specs.split(","):
        t0 = time.time()
        tok = shipped if spec == "shipped" else prepare_tokenizer(spec, [], args.sample_mb << 20, mix=mix)
        learn_s = time.time() - t0
        if spec != "shipped":
            (ROOT / "runs/tokenizers").mkdir(parents=True, exist_ok=True)
            (ROOT / f"runs/tokenizers/{spec}.json").write_text(tok.to_json())
        row = {"tokenizer": spec, "vocab": tok.vocab_size, "learn_s": round(learn_s, 1), "valid": {}, "bench": {}}
        for s in mix.sources:
            row["valid"][s.name] = round(bytes_per_token(tok, [Path(f) for f in s.valid or s.train[-1:]]), 3)
        for kind, files in BENCH.items():
            row["bench"][kind] = round(bytes_per_token(tok, [SHARED_BENCH / f for f in files]), 3)
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"mix": args.mix, "sample_mb": args.sample_mb, "rows": rows},
                                                   indent=1))
    kinds, bench = list(rows[0]["valid"]), list(rows[0]["bench"])
    lines = [f"Bytes per token (higher: fewer model steps per byte), learned on {args.sample_mb} MB of the mix "
             f"`{Path(args.mix).name}` by weight; `shipped` is the default model's BPE (English-trained, GPT-2 "
             "pieces). Validation files of the mix (first MiB of each), then benchmark files by kind.", "",
             "| tokenizer | vocab | " + " | ".join(kinds + bench) + " |",
             "|---|---:|" + "---:|" * (len(kinds) + len(bench))]
    for r in rows:
        cells = [f"{r['valid'][k]:.2f}" for k in kinds] + [f"{r['bench'][k]:.2f}" for k in bench]
        lines.append(f"| {r['tokenizer']} | {r['vocab']} | " + " | ".join(cells) + " |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
