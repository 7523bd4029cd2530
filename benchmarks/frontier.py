"""The design comparison behind the shipped models: equal-budget training runs, then bits per byte
against coding speed on this machine (the frontier the shipped models are picked from).

Every variant changes one thing from the base (gpt-small's shape: 4 x 256, BPE 4096, 2 KV heads,
window 256) and trains on the same text for the same budget: 250 AdamW steps of 16 x 256 BPE
tokens (1.02 M tokens, ~3.1 MB of text; byte-level variants see the same text, 3x the tokens),
seed 0, one thread, bf16 autocast. Then each model codes the same 64 KB of English (the first
64 KB of alice29.txt; bench text is coded, never trained on) in one process with one thread, in
the exact integer arithmetic of format 8 (frontier.json's earlier rows were timed in format 7's
float32 and bf16 arithmetic; `measure --only` re-times rows as "exact").

    .venv/bin/python benchmarks/frontier.py train NAME    # one variant -> runs/cmp/NAME (resumable)
    .venv/bin/python benchmarks/frontier.py measure       # every trained variant -> results/frontier.*
    .venv/bin/python benchmarks/frontier.py measure --only gpt-wide,lstm-wide   # re-measure some rows
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from common import RESULTS as OUT
from common import ROOT, write_json

RUNS = ROOT / "runs" / "cmp"
T = "../shared/corpora/train/"
TRAIN = [T + "en/gutenberg_train.txt", T + "enwik/enwik8_2000000_4154399", T + "code/python311_stdlib_packages.txt",
         T + "multilingual/"]
VALID = [T + "en/gutenberg_valid.txt"]
BPE = ROOT / "lmzip" / "weights" / "gpt-small" / "tokenizer.json"  # the shipped BPE 4096
G = dict(arch="gpt", vocab_size=4096, n_layer=4, n_embd=256, n_head=4, n_kv_head=2, context=256)
VARIANTS: dict[str, tuple[str, dict]] = {
    "base": ("gpt-small's shape", dict(G)),
    "lstm": ("LSTM 2 x 384, matched parameters", dict(arch="lstm", vocab_size=4096, n_layer=2, n_embd=384,
                                                       context=256)),
    "bytes": ("byte-level tokens, window 768 bytes", dict(G, vocab_size=256, context=768)),
    "mqa": ("multi-query attention (1 KV head)", dict(G, n_kv_head=1)),
    "mha": ("multi-head attention (4 KV heads)", dict(G, n_kv_head=4)),
    "ctx128": ("window 128 tokens", dict(G, context=128)),
    "ctx512": ("window 512 tokens", dict(G, context=512)),
    "wide2x384": ("2 layers x 384 (wide, shallow)", dict(G, n_layer=2, n_embd=384, n_head=6, n_kv_head=2)),
    "deep8x192": ("8 layers x 192 (deep, narrow)", dict(G, n_layer=8, n_embd=192, n_head=4, n_kv_head=2)),
    "big6x384": ("6 layers x 384 (larger)", dict(G, n_layer=6, n_embd=384, n_head=6, n_kv_head=2)),
}
STEPS, BATCH_TOKENS = 250, 16 * 256

CHILD = r"""
import json, sys, time
from lmzip.coding import codec, format as fmt
from lmzip.models.checkpoint import load_model
lm = load_model(sys.argv[1]); data = open(sys.argv[2], "rb").read()[:65536]
out = {}
from lmzip.coding.settings import Settings
for arith in ("exact",):
    s = Settings(groups=1)
    codec.encode(data[:2000], lm, s)  # warm-up
    t0 = time.perf_counter(); blob, head, bits = codec.encode(data, lm, s, workers=1); t1 = time.perf_counter()
    back = codec.decode(*fmt.unpack(blob), lm, workers=1); t2 = time.perf_counter()
    out[arith] = {"bpb": 8 * len(blob) / len(data), "compress_kbps": len(data) / 1e3 / (t1 - t0),
               "decompress_kbps": len(data) / 1e3 / (t2 - t1), "verified": back == data}
print(json.dumps(out))
"""


def train(name: str) -> None:
    """Train one variant (resumes from its checkpoint if stopped)."""
    from lmzip.models.tokenizer import BPETokenizer, ByteTokenizer
    from lmzip.models.train import TrainConfig
    from lmzip.models.train import train as run

    m = VARIANTS[name][1]
    k = 3 if m["vocab_size"] == 256 else 1  # BPE 4096 averages ~3.1 bytes per token: same text, 3x tokens
    tok = ByteTokenizer() if k == 3 else BPETokenizer(BPE.read_text())
    cfg = TrainConfig(model=m, train=TRAIN, valid=VALID, out=str(RUNS / name), name=name, steps=STEPS,
                      batch=BATCH_TOKENS * k // m["context"], warmup=25, eval_every=STEPS, ckpt_every=125,
                      eval_tokens=65536 * k)
    t0 = time.time()
    run(cfg, tok, lambda r: print(json.dumps(r), flush=True) if r["step"] % 25 == 0 else None)
    print(f"{name}: {time.time() - t0:.0f} s")


def measure(text: Path, only: list[str] | None = None) -> None:
    """Code the text with every trained variant and the shipped models; write the table and plot.

    With ``only``, just those rows are measured again; the others are kept from frontier.json."""
    from lmzip.models.registry import ORDER  # the shipped models, default pair first

    old = {r["name"]: r for r in json.loads((OUT / "frontier.json").read_text())["rows"]} if only else {}
    rows = []
    shipped = [(n, ROOT / "lmzip" / "weights" / n) for n in ORDER]
    for name, folder in [(n, RUNS / n / "model") for n in VARIANTS] + shipped:
        if only and name not in only:
            if name in old:
                rows.append(old[name])
            continue
        if not (folder / "config.json").is_file():
            continue
        cfg = json.loads((folder / "config.json").read_text())
        r = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(text)], capture_output=True, text=True,
                           cwd=ROOT, env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}, check=True)
        hist = json.loads((RUNS / name / "ckpt.json").read_text())["history"] if name in VARIANTS else []
        tps = [h["tokens_per_s"] for h in hist if "tokens_per_s" in h]
        tr = cfg["training"]
        what = VARIANTS[name][0] if name in VARIANTS else f"shipped ({tr['tokens_seen'] / 1e6:.0f} M tokens)"
        rows.append({"name": name, "what": what,
                     "model": cfg["model"], "params": cfg["params"], "tokens_seen": tr["tokens_seen"],
                     "text_bytes_seen": round(tr["tokens_seen"] * tr["bytes_per_token"]),
                     "valid_bpb": tr["valid_bpb"], "train_tokens_per_s": sum(tps) / len(tps) if tps else None,
                     **json.loads(r.stdout)})
        print(name, rows[-1]["valid_bpb"], rows[-1].get("exact"), flush=True)
    write_json(OUT / "frontier.json", {"text": str(text.relative_to(ROOT)), "bytes": 65536, "rows": rows})
    (OUT / "frontier.md").write_text(markdown(rows))
    plot(rows, OUT / "frontier.png")


def markdown(rows: list[dict]) -> str:
    """The comparison table (figures as measured; speeds are one process, one thread)."""
    lines = ["| variant | what | params | valid bpb | alice 64 KB bpb | KB/s fp32 c/d | KB/s bf16 c/d | "
             "train tok/s |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        f, b = r.get("float32", r.get("exact")), r.get("bfloat16", r.get("exact"))
        tps = f"{r['train_tokens_per_s']:,.0f}" if r["train_tokens_per_s"] else "–"
        lines.append(f"| {r['name']} | {r['what']} | {r['params'] / 1e6:.2f} M | {r['valid_bpb']:.3f} | "
                     f"{b['bpb']:.3f} | {f['compress_kbps']:.1f} / {f['decompress_kbps']:.1f} | "
                     f"{b['compress_kbps']:.1f} / {b['decompress_kbps']:.1f} | {tps} |")
    return "\n".join(lines) + "\n"


def pareto(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both speed (higher) and bpb (lower)."""
    return [i for i, (s, b) in enumerate(points)
            if not any((s2 >= s and b2 <= b) and (s2, b2) != (s, b) for s2, b2 in points)]


def plot(rows: list[dict], path: Path) -> None:
    """Validation bits per byte against coding speed (bf16 compress), the frontier drawn through."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cmp = [r for r in rows if r["name"] in VARIANTS]
    pts = [(r.get("bfloat16", r.get("exact"))["compress_kbps"], r["valid_bpb"]) for r in cmp]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for r, (s, b) in zip(cmp, pts, strict=True):
        ax.scatter(s, b, color="tab:orange" if r["model"]["arch"] == "lstm" else "tab:blue", zorder=3)
        ax.annotate(r["name"], (s, b), textcoords="offset points", xytext=(5, 4), fontsize=9)
    front = sorted(pts[i] for i in pareto(pts))
    ax.plot([p[0] for p in front], [p[1] for p in front], "--", color="gray", label="frontier (equal budget)")
    ax.set_xlabel("coding speed, KB/s (compress, bf16, 1 thread, 64 KB of alice29.txt)")
    ax.set_ylabel("validation bits per byte after 1.02 M tokens")
    ax.set_title("Equal-budget design comparison (blue: Transformer, orange: LSTM)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("train").add_argument("name", choices=list(VARIANTS))
    m = sub.add_parser("measure")
    m.add_argument("--text", type=Path, default=ROOT / "corpora/canterbury/alice29.txt")
    m.add_argument("--only", help="comma-separated rows to measure again (the rest kept from frontier.json)")
    args = ap.parse_args()
    if args.cmd == "train":
        train(args.name)
    else:
        measure(args.text.resolve(), args.only.split(",") if args.only else None)


if __name__ == "__main__":
    main()
