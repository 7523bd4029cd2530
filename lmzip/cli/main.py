"""The `lmzip` command: parse, call the library, print. Exit 0 ok, 1 error, 2 warning."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from lmzip import __version__, files
from lmzip.cli import ui
from lmzip.cli.gzip_style import GzipGroup
from lmzip.cli.io import (
    COMPRESS,
    DECOMPRESS,
    IoOptions,
    each,
    io_options,
    level_options,
    no_progress_option,
    parse_size,
    ray_address,
    refuse_terminal_stdin,
    threads_option,
)
from lmzip.errors import LmzipError

CTX = {"help_option_names": ["-h", "--help"]}
NOTHING_WRITTEN = "interrupted; no output was written"  # atomic_output removes what a stopped run began


@click.group(cls=GzipGroup, context_settings=CTX)
@click.version_option(__version__, "-V", "--version", prog_name="lmzip")
def main() -> None:
    """Lossless compression with a language model's next-token predictions.

    \b
    Also as gzip: lmzip [-d|-t|-l] [-cfkq...] [FILES]; with no FILES, standard input to standard output.
    """


@main.command()
@io_options(COMPRESS)
@level_options
@threads_option(COMPRESS)
@click.option("--segment", type=click.IntRange(1),
              help="Segment length in tokens (default: chosen from the input size).")
@click.option("--mix", is_flag=True,
              help="Mix counting models of the file itself into the model (repeats, tables, code cost less).")
@click.option("--adapt", is_flag=True, help="Learn while coding: an optimizer step every --adapt-steps coded "
              "steps (in deterministic float64: the file decodes on any machine; several times slower).")
@click.option("--adapt-lr", type=float, help="Adam learning rate for --adapt (default 3e-4; 3e-3 with --seed).")
@click.option("--adapt-steps", type=int, help="Coded steps between optimizer steps (default 32; 8 with --seed).")
@click.option("--adapt-block", type=int, hidden=True)  # the former name of --adapt-steps
@click.option("--seed", type=click.IntRange(0, 2**63 - 1),
              help="With --adapt: start from seeded random weights of the preset -m names (learn from scratch).")
@click.option("--block-size", "block_size", metavar="SIZE",
              help="Bytes per independently coded block, such as 4M (default 4 MiB; memory follows it, not the "
                   "input size).")
@ui.guard(interrupted=NOTHING_WRITTEN)
def compress(**params: Any) -> None:
    """Compress FILES (or standard input) to FILE.lmz (-1 fastest … -9 smallest; default: -4)."""
    from lmzip.api import LMCompressor, counting_level
    from lmzip.coding.settings import Settings
    from lmzip.levels import DEFAULT, LEVELS

    io = IoOptions.take(COMPRESS, params)
    model, jobs, level, mix, adapt = (params.pop(k) for k in ("model", "jobs", "level", "mix", "adapt"))
    ray = ray_address(params.pop("ray_address"))
    layout: dict = {}  # a level's options beyond its model and modes (rows, tables, lead, trial), where it sets them
    if level is None and model is None:  # neither: the default model in the default level's modes
        mix, adapt = mix or LEVELS[DEFAULT].mix, adapt or LEVELS[DEFAULT].adapt  # (-m alone: its modes as given)
    if level is not None:  # the level's model and modes; -m, --mix and --adapt given beside it still apply
        lv = LEVELS[level]
        if model is None or counting_level(model) is None:  # counting (-m cm) takes no level's modes
            model, mix, adapt = model or lv.model, mix or lv.mix, adapt or lv.adapt
            layout = {k: v for k, v in lv.options().items() if k not in ("mix", "adapt") and v is not None}
    options = dict(params, mix=mix, adapt=adapt, block_size=parse_size(params["block_size"]), **layout)
    try:
        Settings.make(**options, counting=counting_level(model))  # bad options fail here, before any input is read
    except ValueError as e:
        raise LmzipError(str(e)) from e
    coder: list = []  # made once, for the first input: loading the model is the slow part

    def run(src, dst, total, path):
        if not coder:
            coder.append(LMCompressor(model, jobs=jobs, **options))
        with ui.progress("compress", io.progress) as bar:
            if ray is not None:  # every block a Ray task: the same frames
                from lmzip.coding import cluster

                t = cluster.compress_stream(src, dst, coder[0].model, coder[0].settings, ray, progress=bar)
            else:
                t = coder[0].compress_stream(src, dst, bar, total)
        if io.remove and path is not None:  # read the output back and compare it with the input, block by block
            _verify(dst, path, coder[0].model, jobs, options["threads"])
        coded = [x for x in t.headers if not x.stored]
        return t, f", model {coded[0].model_name}" if coded else ", stored"

    each(io, run)


def _verify(written, path: Path, model, jobs: int | None, threads: int | None) -> None:
    """Decode what was just written and compare it with the input at ``path`` (--rm removes only then)."""
    from lmzip.api import decompress_stream

    written.flush()
    written.seek(0)
    with open(path, "rb") as original:
        same = files.SameAs(original)
        decompress_stream(written, same, model, jobs=jobs, threads=threads)
        if not same.complete():
            raise LmzipError("round-trip check failed; input kept")


@main.command()
@io_options(DECOMPRESS)
@threads_option(DECOMPRESS)
@ui.guard(interrupted=NOTHING_WRITTEN)
def decompress(**params: Any) -> None:
    """Decompress FILE.lmz (or standard input) to FILE."""
    from lmzip.api import decompress_stream as dec

    io = IoOptions.take(DECOMPRESS, params)
    ray = ray_address(params.pop("ray_address"))

    def run(src, dst, total, path):
        with ui.progress("decompress", io.progress) as bar:
            if ray is not None:  # every frame a Ray task, written in order once checked
                from lmzip.coding import cluster

                return cluster.decompress_stream(src, dst, params["model"], ray, progress=bar), ""
            return dec(src, dst, progress=bar, total=total, **params), ""

    each(io, run)


@main.command("test")
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str, readable=False))
@click.option("-m", "--model", help="Model name or folder to decode with (default: the installed model with the "
              "file's id).")
@click.option("-q", "--quiet", is_flag=True, help="No OK lines and no progress bar.")
@no_progress_option()
@ui.guard
def test_cmd(inputs, model, quiet, no_progress) -> None:
    """Decode FILES (or standard input, -) and verify them against their checksums; write nothing."""
    from lmzip.api import decompress_stream

    status = ui.OK
    for name in inputs or ["-"]:
        try:  # the messages of these two name the file already
            if name == "-":
                refuse_terminal_stdin(hint="")
            src = contextlib.nullcontext(sys.stdin.buffer) if name == "-" else files.open_input(Path(name))
        except LmzipError as e:
            ui.error(str(e))
            status = ui.ERROR
            continue
        try:
            with src as f, ui.progress("test", not (quiet or no_progress)) as bar:
                decompress_stream(f, files.Discard(), model=model, progress=bar, total=files.size_of(f))
            if not quiet:
                ui.err.print(f"{name}: OK", markup=False)
        except LmzipError as e:
            ui.error(f"{name}: {e}")
            status = ui.ERROR
    sys.exit(status)


@main.command("list")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str, readable=False))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@ui.guard
def list_cmd(inputs, as_json) -> None:
    """Show the header of .lmz FILES (no model is loaded)."""
    from lmzip.cli.views import list_headers

    sys.exit(list_headers(inputs, as_json))


main.add_command(list_cmd, "info")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@ui.guard
def models(as_json) -> None:
    """List the installed models."""
    from lmzip.cli.views import list_models

    list_models(as_json)


def _register_extra() -> None:
    from lmzip.cli.bench import bench_cmd
    from lmzip.cli.explain import explain_cmd
    from lmzip.cli.import_cmd import import_cmd
    from lmzip.cli.train import train_cmd

    main.add_command(explain_cmd, "explain")
    main.add_command(train_cmd, "train")
    main.add_command(bench_cmd, "bench")
    main.add_command(import_cmd, "import")


_register_extra()
