"""The `lmzip` command: parse, call the library, print. Exit 0 ok, 1 error, 2 warning."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path

import click

from lmzip import __version__, files
from lmzip.cli import ui
from lmzip.cli.gzip_style import GzipGroup, level_options
from lmzip.errors import LmzipError
from lmzip.models import registry

CTX = {"help_option_names": ["-h", "--help"]}


@click.group(cls=GzipGroup, context_settings=CTX)
@click.version_option(__version__, "-V", "--version", prog_name="lmzip")
def main() -> None:
    """Lossless compression with a language model's next-token predictions.

    \b
    Also as gzip: lmzip [-d|-t|-l] [-cfkq...] [FILES]; with no FILES, standard input to standard output.
    """


def io_options(f):
    """The options compress and decompress share (gzip/xz/zstd conventions)."""
    opts = [
        click.argument("inputs", nargs=-1, type=click.Path(path_type=str)),
        click.option("-c", "--stdout", "to_stdout", is_flag=True, help="Write to standard output."),
        click.option("-o", "--output", type=click.Path(path_type=Path), help="Output file (one input only)."),
        click.option("-f", "--force", is_flag=True, help="Overwrite existing files; write binary to a terminal."),
        click.option("-k", "--keep", is_flag=True, help="Keep the input (the default)."),
        click.option("--rm", "remove", is_flag=True, help="Delete the input after a verified round trip."),
        click.option("-S", "--suffix", default=files.SUFFIX, show_default=True, help="Suffix of compressed files."),
        click.option("-m", "--model", help=f"Model name or folder (compress: default {registry.DEFAULT_MODEL})."),
        click.option("--device", default="cpu", show_default=True, help="cpu or cuda."),
        click.option("-j", "--jobs", type=click.IntRange(1, 256), help="Worker processes coding segment groups at "
                     "once (default: one per core; the groups themselves follow from the input size)."),
        click.option("-v", "--verbose", is_flag=True, help="More detail."),
        click.option("-q", "--quiet", is_flag=True, help="No summary lines and no progress bar."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


THREADS = click.option("--threads", type=click.IntRange(1, 64),
                       help="Intra-op threads per process (default: the cores, shared by the processes coding "
                            "groups; the bytes never depend on it).")


@main.command()
@io_options
@level_options
@THREADS
@click.option("--segment", type=int, help="Segment length in tokens (default: chosen from the input size).")
@click.option("--mix", is_flag=True, help="Mix the model with an online match model (repeats cost less).")
@click.option("--adapt", is_flag=True, help="Learn while coding: an optimizer step after every block "
              "(in deterministic float64: the file decodes on any machine; several times slower).")
@click.option("--adapt-lr", type=float, help="Adam learning rate for --adapt (default 3e-4; 3e-3 with --seed).")
@click.option("--adapt-block", type=int, help="Coded steps between optimizer steps (default 32; 8 with --seed).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1),
              help="With --adapt: start from seeded random weights of the preset -m names (learn from scratch).")
@click.option("--block-size", "block_size", metavar="SIZE",
              help="Bytes per independently coded block, such as 4M (default 4 MiB; memory follows it, not the "
                   "input size).")
def compress(inputs, to_stdout, output, force, keep, remove, suffix, model, device, jobs, verbose, quiet,
             level, threads, segment, mix, adapt, adapt_lr, adapt_block, seed, block_size) -> None:
    """Compress FILES (or standard input) to FILE.lmz (-1 fastest … -9 smallest; default: -4)."""
    from lmzip.api import LMCompressor
    from lmzip.coding.settings import Settings
    from lmzip.levels import LEVELS

    if level is not None:  # the level's model and modes; -m, --mix and --adapt given beside it still apply
        lv = LEVELS[level]
        model, mix, adapt = model or lv.model, mix or lv.mix, adapt or lv.adapt
    state: dict = {}
    try:
        options = dict(mix=mix, adapt=adapt, adapt_lr=adapt_lr, adapt_block=adapt_block, seed=seed, segment=segment,
                       device=device, threads=threads, block_size=_size(block_size))
        Settings.make(**options)  # bad options fail here, before any input is read
    except ValueError as e:
        _exit_error(str(e))

    def run(src, dst, total, path):
        if "c" not in state:
            state["c"] = LMCompressor(model, jobs=jobs, **options)
        with ui.progress("compress", not quiet) as bar:
            t = state["c"].compress_stream(src, dst, bar, total)
        if remove and path is not None:  # read the output back and compare it with the input, block by block
            from lmzip.api import decompress_stream

            dst.flush()
            dst.seek(0)
            with open(path, "rb") as original:
                same = files.SameAs(original)
                decompress_stream(dst, same, state["c"].model, jobs=jobs, threads=threads)
                if not same.complete():
                    raise LmzipError("round-trip check failed; input kept")
        h = t.first
        note = f", model {h.model_name}" if not all(x.stored for x in t.headers) else ", stored"
        return t.original, t.compressed, note, t

    _each(inputs, run, "compress", to_stdout, output, force, remove, suffix, quiet, verbose)


@main.command()
@io_options
@THREADS
def decompress(inputs, to_stdout, output, force, keep, remove, suffix, model, device, jobs, verbose, quiet,
               threads) -> None:
    """Decompress FILE.lmz (or standard input) to FILE."""
    from lmzip.api import decompress_stream as dec

    def run(src, dst, total, path):
        with ui.progress("decompress", not quiet) as bar:
            t = dec(src, dst, model=model, progress=bar, jobs=jobs, device=device, total=total, threads=threads)
        return t.original, t.compressed, "", t

    _each(inputs, run, "decompress", to_stdout, output, force, remove, suffix, quiet, verbose)


def _each(inputs, run, mode, to_stdout, output, force, remove, suffix, quiet, verbose) -> None:
    """Apply ``run`` to every input with the file conventions; exit with the worst status."""
    names = list(inputs) or ["-"]
    try:
        files.check_suffix(suffix)
    except LmzipError as e:
        _exit_error(str(e))
    if output is not None and len(names) > 1:
        _exit_error("-o takes one input only")
    if output is not None and to_stdout:
        _exit_error("-o and -c cannot be used together")
    status = ui.OK
    for name in names:
        try:
            _one(name, run, mode, to_stdout, output, force, remove, suffix, quiet, verbose)
        except files.Skip as e:
            ui.error(str(e))
            status = max(status, ui.WARNING)
        except LmzipError as e:
            ui.error(str(e))
            status = ui.ERROR
        except KeyboardInterrupt:
            ui.error("interrupted; no output was written")
            sys.exit(130)
    sys.exit(status)


def _one(name, run, mode, to_stdout, output, force, remove, suffix, quiet, verbose) -> None:
    stdin = name == "-"
    src = None if stdin else Path(name)
    if to_stdout or (stdin and output is None):
        dst = None
    elif output is not None:
        dst = output
    else:
        dst = files.compressed_name(src, suffix) if mode == "compress" else files.decompressed_name(src, suffix)
    if dst is None and mode == "compress" and ui.stdout_is_terminal() and not force:
        raise LmzipError("refusing to write compressed data to a terminal (use -f to force)")
    if dst is not None and dst.exists() and not force:
        raise LmzipError(f"{dst}: already exists; use -f to overwrite")
    if stdin and mode == "decompress" and not force:
        _refuse_terminal_stdin()
    fin = sys.stdin.buffer if stdin else files.open_input(src, force)
    t0 = time.perf_counter()
    try:
        total = None if stdin else files.size_of(fin)
        if dst is None:
            orig, comp, note, t = run(fin, ui.Stdout(), total, src)
        else:
            with files.atomic_output(dst, force, like=src) as fout:
                orig, comp, note, t = run(fin, fout, total, src)
    except (files.Skip, ui.StdoutError):
        raise
    except LmzipError as e:
        raise LmzipError(f"{name}: {e}") from e
    finally:
        if not stdin:
            fin.close()
    if remove and src is not None and dst is not None:
        files.remove_input(src)
    if not quiet:
        bpb = 8 * comp / max(1, orig)
        where = f" -> {dst}" if dst is not None else ""
        ui.err.print(f"{name}: {bpb:.3f} bpb ({ui.human(orig)} => {ui.human(comp)}{note}){where}", markup=False)
    if verbose:
        h = t.first
        secs = time.perf_counter() - t0
        blocks = f"{len(t.headers)} block(s) of up to {ui.human(h.block_size)}, first: " if h.block_size else ""
        layout = "stored" if h.stored else (f"{h.n_tokens:,} tokens in {h.n_segments} segments of {h.segment_length}"
                                             f", {h.groups} group(s), model id {h.model_id.hex()[:12]}"
                                             + (", CRLF" if h.crlf else "") + (", mix" if h.mix else "")
                                             + f", arithmetic {h.arith}"
                                             + (f", adapt lr {h.adapt_lr:g} block {h.adapt_block}" if h.adapt else "")
                                             + (f", random weights seed {h.seed}" if h.seed is not None else ""))
        ui.err.print(f"  {blocks}{layout}; {orig / 1000 / max(secs, 1e-9):.1f} KB/s ({secs:.2f} s)", markup=False)


def _size(text: str | None) -> int | None:
    """'4M' -> 4 MiB (K, M, G: powers of 1024; plain digits: bytes)."""
    if text is None:
        return None
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if scale > 1 else t
    if not digits.isdigit():
        raise ValueError(f"--block-size: {text!r} is not a size such as 4M or 65536")
    return int(digits) * scale


def _refuse_terminal_stdin(hint: str = " (use -f to force)") -> None:
    """Compressed data is never read from a terminal (as gzip -d): it would wait for typed bytes."""
    if ui.stdin_is_terminal():
        raise LmzipError(f"refusing to read compressed data from a terminal{hint}")


def _exit_error(message: str) -> None:
    ui.error(message)
    sys.exit(ui.ERROR)


@main.command("test")
@click.argument("inputs", nargs=-1, type=click.Path(path_type=str))
@click.option("-m", "--model", help="Model folder to decode with (default: found by the file's id).")
@click.option("-q", "--quiet", is_flag=True)
def test_cmd(inputs, model, quiet) -> None:
    """Decode FILES (or standard input, -) and verify them against their checksums; write nothing."""
    from lmzip.api import decompress_stream

    status = ui.OK
    for name in inputs or ["-"]:
        try:  # the messages of these two name the file already
            if name == "-":
                _refuse_terminal_stdin(hint="")
            src = contextlib.nullcontext(sys.stdin.buffer) if name == "-" else files.open_input(Path(name))
        except LmzipError as e:
            ui.error(str(e))
            status = ui.ERROR
            continue
        try:
            with src as f, ui.progress("test", not quiet) as bar:
                decompress_stream(f, files.Discard(), model=model, progress=bar, total=files.size_of(f))
            if not quiet:
                ui.err.print(f"{name}: OK", markup=False)
        except LmzipError as e:
            ui.error(f"{name}: {e}")
            status = ui.ERROR
    sys.exit(status)


@main.command("list")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_cmd(inputs, as_json) -> None:
    """Show the header of .lmz FILES (no model is loaded)."""
    from lmzip.cli.views import list_headers

    sys.exit(list_headers(inputs, as_json))


main.add_command(list_cmd, "info")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
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
