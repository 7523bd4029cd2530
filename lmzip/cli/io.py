"""What compress and decompress share: their file options (one object, not ten parameters), each with the help
text of the command it is on, and the gzip-style loop over the inputs."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

import click

from lmzip import files
from lmzip.cli import ui
from lmzip.cli.views import header_record, layout_line
from lmzip.errors import LmzipError
from lmzip.models import registry

if TYPE_CHECKING:  # importing the codec loads torch: not for `lmzip list` or --help
    from lmzip.coding.stream import Totals

COMPRESS, DECOMPRESS = "compress", "decompress"

# The options whose meaning differs between the two commands, in each one's words.
HELP = {
    COMPRESS: {
        "rm": "Delete the input after a verified round trip.",
        "model": f"Model name or folder (default: {registry.DEFAULT_MODEL}, or the level's).",
        "device": "Run the model on cpu or cuda.",
        "jobs": "Segment groups coded at once, in threads (default: one per core; the groups themselves "
                "follow from the input size).",
        "threads": "Intra-op threads per group (default: the cores, shared by the groups coding at once; the "
                   "bytes never depend on it).",
    },
    DECOMPRESS: {
        "rm": "Delete the input once its output is written and its checksum verified.",
        "model": "Model name or folder to decode with (default: the installed model with the file's id).",
        "device": "Run the model on cpu or cuda (any device decodes any file).",
        "jobs": "Segment groups of the file decoded at once, in threads (default: one per core).",
        "threads": "Intra-op threads per group (default: the cores, shared by the groups coding at once).",
    },
}

# run(input, output, input size if known, input path if a file) -> (what the stream came to, a note for the summary)
Run = Callable[[BinaryIO, Any, "int | None", "Path | None"], "tuple[Totals, str]"]


@dataclass(frozen=True)
class IoOptions:
    """Where each input goes and what is printed about it (the click parameters compress and decompress share)."""

    mode: str
    inputs: tuple[str, ...] = ()
    to_stdout: bool = False
    output: Path | None = None
    force: bool = False
    remove: bool = False
    suffix: str = files.SUFFIX
    verbose: bool = False
    quiet: bool = False
    progress: bool = True  # a live bar, where stderr is a terminal (see ui.progress)

    @classmethod
    def take(cls, mode: str, params: dict[str, Any]) -> IoOptions:
        """Pop the shared options out of a command's click parameters; what stays in ``params`` is its own."""
        params.pop("keep")  # -k: keeping the input is the default; the flag is there for gzip's users
        shown = not params.pop("no_progress")
        mine = {f.name: params.pop(f.name) for f in fields(cls) if f.name in params}
        return cls(mode, **{**mine, "inputs": tuple(mine["inputs"]) or ("-",),
                            "progress": shown and not mine["quiet"]})

    def check(self) -> None:
        """Refuse contradictory options before any input is read."""
        files.check_suffix(self.suffix)
        if self.output is not None and len(self.inputs) > 1:
            raise LmzipError("-o takes one input only")
        if self.output is not None and self.to_stdout:
            raise LmzipError("-o and -c cannot be used together")
        if self.remove and self.to_stdout:  # as gzip: -c keeps the input; and a pipe cannot be read back
            raise LmzipError("--rm and -c cannot be used together (the input is kept with -c)")


def io_options(mode: str) -> Callable:
    """The options compress and decompress share (gzip/xz/zstd conventions), with ``mode``'s help texts."""
    text = HELP[mode]
    opts = [
        # missing and unreadable ones: reported one by one, the others still processed
        click.argument("inputs", nargs=-1, type=click.Path(path_type=str, readable=False)),
        click.option("-c", "--stdout", "to_stdout", is_flag=True, help="Write to standard output."),
        click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
                     help="Output file (one input only)."),
        click.option("-f", "--force", is_flag=True, help="Overwrite existing files; write binary to a terminal."),
        click.option("-k", "--keep", is_flag=True, help="Keep the input (the default)."),
        click.option("--rm", "remove", is_flag=True, help=text["rm"]),
        click.option("-S", "--suffix", default=files.SUFFIX, show_default=True, help="Suffix of compressed files."),
        click.option("-m", "--model", help=text["model"]),
        click.option("--device", default="cpu", show_default=True, help=text["device"]),
        click.option("-j", "--jobs", type=click.IntRange(1, 256), help=text["jobs"]),
        click.option("-v", "--verbose", is_flag=True, help="Also show each file's layout and speed."),
        click.option("-q", "--quiet", is_flag=True, help="No summary lines and no progress bar."),
        no_progress_option(),
        click.option("--ray", "ray_address", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]",
                     help="Every block a Ray task: on this machine, or on the cluster at ADDRESS (HOST:PORT, auto; "
                     "write --ray=ADDRESS before files); the same file as without. Needs pip install "
                     "'lmzip[cluster]'."),
    ]

    def apply(f: Callable) -> Callable:
        for o in reversed(opts):
            f = o(f)
        return f

    return apply


def ray_address(address: str | None) -> str | None:
    """--ray's address, checked; without Ray installed one line and exit status 2."""
    if address is None:
        return None
    from lmzip.coding import cluster

    if not cluster.available():
        ui.error("--ray needs Ray, which is not installed: pip install 'lmzip[cluster]'")
        sys.exit(2)
    return cluster.check_address(address)


def no_progress_option() -> Callable:
    """--no-progress: no live bar even on a terminal (one only ever shows where stderr is a terminal)."""
    return click.option("--no-progress", is_flag=True, help="No progress bar, even on a terminal.")


def threads_option(mode: str) -> Callable:
    """--threads, in ``mode``'s words."""
    return click.option("--threads", type=click.IntRange(1, 64), help=HELP[mode]["threads"])


def each(opts: IoOptions, run: Run) -> NoReturn:
    """Apply ``run`` to every input with gzip's conventions; exit with the worst status (a missing or skipped
    input is reported and the others are still processed)."""
    opts.check()
    status = ui.OK
    for name in opts.inputs:
        try:
            _one(name, opts, run)
        except files.Skip as e:
            ui.error(str(e))
            status = max(status, ui.WARNING)
        except LmzipError as e:
            ui.error(str(e))
            status = ui.ERROR
        except OSError as e:  # a name the system refuses (too long, a loop of links): this input only
            ui.error(f"{e.filename or name}: {e.strerror or e}")
            status = ui.ERROR
    sys.exit(status)


def _one(name: str, opts: IoOptions, run: Run) -> None:
    stdin = name == "-"
    src = None if stdin else Path(name)
    dst = _destination(src, opts)
    if dst is None and opts.mode == COMPRESS and ui.stdout_is_terminal() and not opts.force:
        raise LmzipError("refusing to write compressed data to a terminal (use -f to force)")
    if src is not None and dst is not None and files.same_file(src, dst):
        raise LmzipError(f"{name}: the input and the output are the same file")
    if dst is not None and dst.exists() and not opts.force:
        raise LmzipError(f"{dst}: already exists; use -f to overwrite")
    if stdin and opts.mode == DECOMPRESS and not opts.force:
        refuse_terminal_stdin()
    fin = sys.stdin.buffer if stdin else files.open_input(src, opts.force)
    t0 = time.perf_counter()
    try:
        total = None if stdin else files.size_of(fin)
        if dst is None:
            t, note = run(fin, ui.Stdout(), total, src)
        else:
            with files.atomic_output(dst, opts.force, like=src) as fout:
                t, note = run(fin, fout, total, src)
    except (files.Skip, ui.StdoutError):
        raise
    except LmzipError as e:
        raise LmzipError(f"{name}: {e}") from e
    finally:
        if not stdin:
            fin.close()
    if opts.remove and src is not None and dst is not None:
        files.remove_input(src, dst)
    if not opts.quiet and (opts.verbose or not (stdin and dst is None)):  # a filter is silent, as gzip
        bpb = f"{8 * t.compressed / t.original:.3f} bpb" if t.original else "empty"
        where = f" -> {dst}" if dst is not None else ""
        ui.err.print(f"{name}: {bpb} ({ui.human(t.original)} => {ui.human(t.compressed)}{note}){where}",
                     markup=False)
    if opts.verbose:
        secs = time.perf_counter() - t0
        line = layout_line(header_record(name, t.compressed, t.headers))
        ray = f"; {len(t.nodes)} blocks on {len(set(t.nodes))} Ray nodes" if t.nodes else ""
        ui.err.print(f"  {line}; {t.original / 1000 / max(secs, 1e-9):.1f} KB/s ({secs:.2f} s){ray}", markup=False)


def _destination(src: Path | None, opts: IoOptions) -> Path | None:
    """The file an input is written to (None: standard output)."""
    if opts.to_stdout or (src is None and opts.output is None):
        return None
    if opts.output is not None:
        return opts.output
    if opts.mode == COMPRESS:
        return files.compressed_name(src, opts.suffix)
    return files.decompressed_name(src, opts.suffix)


def refuse_terminal_stdin(hint: str = " (use -f to force)") -> None:
    """Compressed data is never read from a terminal (as gzip -d): it would wait for typed bytes."""
    if ui.stdin_is_terminal():
        raise LmzipError(f"refusing to read compressed data from a terminal{hint}")


def parse_size(text: str | None) -> int | None:
    """'4M' -> 4 MiB (K, M, G: powers of 1024; plain digits: bytes)."""
    if text is None:
        return None
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if scale > 1 else t
    if not (digits.isascii() and digits.isdigit()):
        raise LmzipError(f"--block-size: {text!r} is not a size such as 4M or 65536")
    return int(digits) * scale


def level_options(f):
    """-1 … -9: the levels of lmzip.levels (one parameter, ``level``; None without one)."""
    from lmzip.levels import LEVELS

    for n in sorted(LEVELS, reverse=True):
        lv = LEVELS[n]
        what = f"{lv.model} {lv.what}".strip()
        f = click.option(f"-{n}", "level", flag_value=n, help=f"Level {n}: {what}" + (
            " (fastest)" if n == 1 else " (smallest)" if n == 9 else "") + ".")(f)
    return f
