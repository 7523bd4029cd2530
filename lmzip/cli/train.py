"""`lmzip train`: the click layer over lmzip.models.train."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from lmzip.cli import ui
from lmzip.cli.io import no_progress_option
from lmzip.errors import LmzipError
from lmzip.models import registry

Log = Callable[[dict[str, Any]], None]
EVERY = 50  # steps between log lines where no live bar is drawn (a log file, a pipe, --no-progress)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--preset", default="gpt-wide", show_default=True, type=click.Choice(list(registry.PRESETS)),
              help="Architecture preset (lmzip.models.registry).")
@click.option("--data", "data", multiple=True, type=click.Path(path_type=str),
              help="Training files or folders, or one mixture file (.toml: sources with weights and per-kind "
                   "validation files).")
@click.option("--mix", "mixture_file", type=click.Path(path_type=str), hidden=True)  # the former name of --data X.toml
@click.option("--dataset", help="A local or cached Hugging Face dataset (offline) to train on.")
@click.option("--split", default="train", show_default=True)
@click.option("--column", default="text", show_default=True)
@click.option("--valid", multiple=True, type=click.Path(path_type=str),
              help="Validation files (default: the last 2% of the training tokens).")
@click.option("--tokenizer", help="bytes, bpe<N>, ubpe<N> (pieces along UTF-8 characters) or a tokenizer.json "
              "(default: the preset's).")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Run folder (resumes if it exists).")
@click.option("--name", help="Model name (default: the run folder's name).")
@click.option("--steps", default=1000, show_default=True, type=click.IntRange(1), help="Optimizer steps in all.")
@click.option("--batch", default=32, show_default=True, type=click.IntRange(1), help="Sequences per step.")
@click.option("--context", type=click.IntRange(2), help="Override the preset's context length.")
@click.option("--lr", default=1.5e-3, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Peak learning rate (cosine decay after the warm-up).")
@click.option("--warmup", default=200, show_default=True, type=click.IntRange(0), help="Warm-up steps.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0))
@click.option("--eval-every", default=250, show_default=True, type=click.IntRange(1),
              help="Steps between validation runs and checkpoints.")
@click.option("--eval-tokens", default=65536, show_default=True, type=click.IntRange(1),
              help="Validation tokens (of each kind, for a mixture).")
@click.option("--device", default="cpu", show_default=True, help="Train on cpu or cuda.")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(1, 256), help="Intra-op threads.")
@click.option("--export", "export_only", is_flag=True, help="Only export OUT's latest checkpoint to OUT/model.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no log lines.")
@no_progress_option()
@ui.guard(interrupted="interrupted; resume with the same command (the last checkpoint is kept)")
def train_cmd(preset, data, mixture_file, dataset, split, column, valid, tokenizer, out, name, steps, batch, context,
              lr, warmup, seed, eval_every, eval_tokens, device, threads, export_only, quiet, no_progress) -> None:
    """Train a model; the result is a model folder in OUT/model (resumable)."""
    from lmzip.models import datamix
    from lmzip.models.data import list_files, load_dataset_texts
    from lmzip.models.tokenizer import tokenizer_from_json
    from lmzip.models.train import TrainConfig, export_checkpoint, prepare_tokenizer, train

    if export_only:
        path = export_checkpoint(out, tokenizer_from_json((out / "tokenizer.json").read_text()))
        ui.err.print(f"model written to {path}")
        return
    from lmzip.api import counting_level

    if counting_level(name or out.name) is not None:
        raise LmzipError(f"{name or out.name!r} names counting (level -1, no network); choose another --name")
    p = registry.PRESETS[preset]
    sources = list(data)
    if dataset:
        texts = load_dataset_texts(dataset, split, column)
        out.mkdir(parents=True, exist_ok=True)
        (out / "dataset.txt").write_bytes(b"\n".join(texts))
        sources.append(str(out / "dataset.txt"))
    mixtures = [s for s in sources if s.endswith(".toml")] + ([mixture_file] if mixture_file else [])
    mixture = datamix.load_mixture(mixtures[0]) if mixtures else None
    if mixture is not None:
        if len(sources) + bool(mixture_file) > 1 or dataset or valid:
            raise LmzipError("a mixture file names its own files: give it alone, without other --data, --dataset "
                             "or --valid")
        sources, valid = mixture.train_files(), tuple(mixture.valid_files())
    if not sources:
        raise LmzipError("nothing to train on: give --data or --dataset")
    model = dict(p.model, **({"context": context} if context else {}))
    tok_file = out / "tokenizer.json"
    if tok_file.exists():  # resuming: the tokenizer is part of the run
        tok = tokenizer_from_json(tok_file.read_text())
    else:
        tok = prepare_tokenizer(tokenizer or p.tokenizer, list_files(sources), mixture=mixture)
        out.mkdir(parents=True, exist_ok=True)
        tok_file.write_text(tok.to_json())
    model["vocab_size"] = tok.vocab_size
    cfg = TrainConfig(model=model, train=sources, valid=list(valid), out=str(out), name=name or out.name,
                      steps=steps, batch=batch, lr=lr, warmup=warmup, seed=seed, eval_every=eval_every,
                      eval_tokens=eval_tokens, ckpt_every=eval_every, device=device, threads=threads,
                      extra={"preset": preset}, mixture=mixture.to_dict() if mixture else None)
    with reporter(steps, quiet, not no_progress) as log:
        path = train(cfg, tok, log)
    meta = json.loads((path / "config.json").read_text())
    ui.err.print(f"model written to {path} (id {meta['id'][:12]}, valid {meta['training']['valid_bpb']:.3f} bpb)")


@contextlib.contextmanager
def reporter(total: int, quiet: bool, live: bool) -> Iterator[Log | None]:
    """What train reports after each step: a live bar on a terminal (steps, tokens/s, loss, ETA); elsewhere a
    log line every EVERY steps, since people log training to files; the validation lines either way; nothing
    with -q."""
    if quiet:
        yield None
    elif ui.shows_progress(live):
        with _bar(total) as log:
            yield log
    else:
        yield _lines(total)


def _valid(rec: dict[str, Any]) -> str:
    """The validation figures of a step: bits per byte, and per kind for a mix."""
    if "valid_bpb" not in rec:
        return ""
    kinds = rec.get("valid_kinds") or {}
    return f"  valid {rec['valid_bpb']:.3f} bpb" + (
        " (" + ", ".join(f"{k} {b:.3f}" for k, b in kinds.items()) + ")" if kinds else "")


@contextlib.contextmanager
def _bar(total: int) -> Iterator[Log]:
    cols = (TextColumn("train"), BarColumn(), MofNCompleteColumn(), TextColumn("steps"),
            TextColumn("{task.fields[rate]:,.0f} tok/s  loss {task.fields[loss]:.3f}"), TimeRemainingColumn())
    with Progress(*cols, console=ui.err, transient=True) as bar:
        task: list = []

        def log(rec: dict[str, Any]) -> None:
            if not task:  # the first step of this run: a resumed run's earlier steps are not its speed
                task.append(bar.add_task("train", total=total, completed=rec["step"] - 1, rate=0.0, loss=0.0))
            bar.update(task[0], completed=rec["step"], rate=rec["tokens_per_s"], loss=rec["loss"])
            if "valid_bpb" in rec:  # printed above the bar: it stays when the bar goes
                bar.console.print(f"step {rec['step']}/{total}  loss {rec['loss']:.3f}{_valid(rec)}", markup=False)

        yield log


def _lines(total: int) -> Log:
    start: list = []  # (first step of this run, its time)

    def log(rec: dict[str, Any]) -> None:
        step = rec["step"]
        if not start:
            start.append((step - 1, time.monotonic()))
        if step % EVERY == 0 or "valid_bpb" in rec or step == total:
            first, t0 = start[0]
            per_step = (time.monotonic() - t0) / max(1, step - first)
            ui.err.print(f"step {step}/{total}  loss {rec['loss']:.3f}  {rec['tokens_per_s']:,.0f} tok/s  "
                         f"ETA {_clock(per_step * (total - step))}{_valid(rec)}", markup=False)

    return log


def _clock(seconds: float) -> str:
    """Seconds as H:MM:SS."""
    s = round(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
