"""`lmzip import`: the click layer over lmzip.models.hf_import."""

from __future__ import annotations

import re
from pathlib import Path

import click

from lmzip.cli import ui
from lmzip.errors import LmzipError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--name", help="Model name (default: the checkpoint folder's name).")
@click.option("--out", type=click.Path(path_type=Path),
              help="Models folder to write NAME into (default: the user's, which lmzip models lists).")
@click.option("--context", type=click.IntRange(2, 1 << 16),
              help="Attention window in tokens (default: the checkpoint's, at most 1024).")
@click.option("-f", "--force", is_flag=True, help="Replace an existing model folder of that name.")
@click.option("-q", "--quiet", is_flag=True)
@ui.guard(interrupted="interrupted; nothing was written")
def import_cmd(path, name, out, context, force, quiet) -> None:
    """Turn a local Hugging Face checkpoint (GPT-2 or Llama, safetensors, byte-level BPE) into an lmzip
    model that codes in exact integer arithmetic. Nothing is downloaded."""
    from lmzip.api import counting_level
    from lmzip.models import registry

    name = name or Path(path).resolve().name
    if not _NAME.fullmatch(name):
        raise LmzipError(f"bad model name {name!r} (letters, digits and . _ + -; at most 100)")
    if counting_level(name) is not None:
        raise LmzipError(f"{name!r} names counting (level -1, no network); choose another with --name")
    if (registry.SHIPPED / name).is_dir():
        raise LmzipError(f"{name!r} is a shipped model's name; choose another with --name")
    from lmzip.models.hf_import import import_checkpoint

    dest = (out or registry.user_dir()) / name
    mid, model, kind = import_checkpoint(path, dest, context, replace=force)
    if not quiet:
        c = model.config
        ui.err.print(f"imported {kind} as {name!r} (id {mid.hex()}, {model.num_params():,} parameters, "
                     f"vocabulary {c.vocab_size}, window {c.context}) into {dest}", markup=False)
