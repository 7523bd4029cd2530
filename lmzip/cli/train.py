"""`lmzip train`: the click layer over lmzip.models.train."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from lmzip.cli import ui
from lmzip.errors import LmzipError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--preset", default="gpt-wide", show_default=True, help="Architecture preset (lmzip.models.registry).")
@click.option("--data", "data", multiple=True, type=click.Path(path_type=str), help="Training files or folders.")
@click.option("--mix", "mix_file", type=click.Path(path_type=str),
              help="A mix file (TOML): sources with weights and per-kind validation files.")
@click.option("--dataset", help="A local or cached Hugging Face dataset (offline) to train on.")
@click.option("--split", default="train", show_default=True)
@click.option("--column", default="text", show_default=True)
@click.option("--valid", multiple=True, type=click.Path(path_type=str),
              help="Validation files (default: the last 2% of the training tokens).")
@click.option("--tokenizer", help="bytes, bpe<N>, ubpe<N> (pieces along UTF-8 characters) or a tokenizer.json "
              "(default: the preset's).")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Run folder (resumes if it exists).")
@click.option("--name", help="Model name (default: the run folder's name).")
@click.option("--steps", default=1000, show_default=True)
@click.option("--batch", default=32, show_default=True)
@click.option("--context", type=int, help="Override the preset's context length.")
@click.option("--lr", default=1.5e-3, show_default=True)
@click.option("--warmup", default=200, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--eval-every", default=250, show_default=True)
@click.option("--eval-tokens", default=65536, show_default=True, help="Validation tokens (of each kind, for a mix).")
@click.option("--device", default="cpu", show_default=True)
@click.option("--threads", default=1, show_default=True)
@click.option("--export", "export_only", is_flag=True, help="Only export OUT's latest checkpoint to OUT/model.")
@click.option("-q", "--quiet", is_flag=True)
def train_cmd(preset, data, mix_file, dataset, split, column, valid, tokenizer, out, name, steps, batch, context, lr,
              warmup, seed, eval_every, eval_tokens, device, threads, export_only, quiet) -> None:
    """Train a model; the result is a model folder in OUT/model (resumable)."""
    from lmzip.models import datamix, registry
    from lmzip.models.data import list_files, load_dataset_texts
    from lmzip.models.tokenizer import tokenizer_from_json
    from lmzip.models.train import TrainConfig, export_checkpoint, prepare_tokenizer, train

    try:
        if export_only:
            path = export_checkpoint(out, tokenizer_from_json((out / "tokenizer.json").read_text()))
            ui.err.print(f"model written to {path}")
            return
        if preset not in registry.PRESETS:
            raise LmzipError(f"unknown preset {preset!r} (presets: {', '.join(registry.PRESETS)})")
        p = registry.PRESETS[preset]
        sources = list(data)
        if dataset:
            texts = load_dataset_texts(dataset, split, column)
            out.mkdir(parents=True, exist_ok=True)
            (out / "dataset.txt").write_bytes(b"\n".join(texts))
            sources.append(str(out / "dataset.txt"))
        mix = datamix.load_mix(mix_file) if mix_file else None
        if mix is not None:
            if sources or valid:
                raise LmzipError("--mix names its own files: give it without --data, --dataset or --valid")
            sources, valid = mix.train_files(), tuple(mix.valid_files())
        if not sources:
            raise LmzipError("nothing to train on: give --data, --mix or --dataset")
        model = dict(p.model, **({"context": context} if context else {}))
        tok_file = out / "tokenizer.json"
        if tok_file.exists():  # resuming: the tokenizer is part of the run
            tok = tokenizer_from_json(tok_file.read_text())
        else:
            tok = prepare_tokenizer(tokenizer or p.tokenizer, list_files(sources), mix=mix)
            out.mkdir(parents=True, exist_ok=True)
            tok_file.write_text(tok.to_json())
        model["vocab_size"] = tok.vocab_size
        cfg = TrainConfig(model=model, train=sources, valid=list(valid), out=str(out), name=name or out.name,
                          steps=steps, batch=batch, lr=lr, warmup=warmup, seed=seed, eval_every=eval_every,
                          eval_tokens=eval_tokens, ckpt_every=eval_every, device=device, threads=threads,
                          extra={"preset": preset}, mix=mix.to_dict() if mix else None)
        path = train(cfg, tok, None if quiet else _log(steps))
    except LmzipError as e:
        ui.error(str(e))
        sys.exit(ui.ERROR)
    except KeyboardInterrupt:
        ui.error("interrupted; resume with the same command (the last checkpoint is kept)")
        sys.exit(130)
    meta = json.loads((path / "config.json").read_text())
    ui.err.print(f"model written to {path} (id {meta['id'][:12]}, valid {meta['training']['valid_bpb']:.3f} bpb)")


def _log(total: int):
    def log(rec: dict) -> None:
        if rec["step"] % 50 == 0 or "valid_bpb" in rec or rec["step"] == total:
            v = f"  valid {rec['valid_bpb']:.3f} bpb" if "valid_bpb" in rec else ""
            if "valid_kinds" in rec:
                v += " (" + ", ".join(f"{k} {b:.3f}" for k, b in rec["valid_kinds"].items()) + ")"
            ui.err.print(f"step {rec['step']}/{total}  loss {rec['loss']:.3f}  "
                         f"{rec['tokens_per_s']:,.0f} tok/s{v}", markup=False)
    return log
