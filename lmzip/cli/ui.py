"""One stdout and one stderr rich console, error/warning lines, the progress bar, binary standard output, and
the error and interrupt wrapper every command runs in."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from lmzip.errors import LmzipError

# Tables keep their columns when piped: a pipe gets a wide console instead of rich's 80 columns.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, highlight=False, soft_wrap=True)

OK, ERROR, WARNING = 0, 1, 2
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process Ctrl-C stopped
TERMINATED = 143  # 128 + SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command runs so that it ends as Ctrl-C does: partial outputs removed, worker
    processes stopped and their semaphores released (no resource_tracker warnings), one line."""


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated()


def on_terminate() -> None:
    """Let SIGTERM end the command cleanly (in the main thread only, where Python runs signal handlers)."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)


def as_program(call: Callable[[], Any]) -> Any:
    """Run a command as the program (a console script, ``python -m lmzip``): where it ends interrupted
    (status 130), leave at once with that status. CPython can still kill itself with SIGINT at exit after a
    KeyboardInterrupt that ``guard`` caught (seen where Ctrl-C came while torch was being imported: the
    one line printed, then status -2 instead of 130); outputs are already removed by then."""
    try:
        return call()
    except SystemExit as e:
        if e.code == INTERRUPTED:
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(INTERRUPTED)
        raise


F = TypeVar("F", bound=Callable[..., Any])


def stdout_is_terminal() -> bool:
    """Whether standard output is a terminal (compressed data is never written to one)."""
    return sys.stdout.isatty()


def stdin_is_terminal() -> bool:
    """Whether standard input is a terminal (compressed data is never read from one)."""
    return sys.stdin.isatty()


def error(message: str) -> None:
    """``lmzip: message`` on stderr (the caller decides the exit status)."""
    err.print(f"lmzip: {message}", markup=False)


def guard(fn: F | None = None, *, interrupted: str = "interrupted") -> Any:
    """Run a command so that it ends in one line, never a traceback: an LmzipError prints ``lmzip: message``
    and exits 1; Ctrl-C prints ``lmzip: <interrupted>`` and exits 130 (partial outputs are removed where they
    are written, by files.atomic_output); a reader that went away (``| head``) ends it quietly with 1.
    Use as ``@guard`` or ``@guard(interrupted="...")``, below the click decorators."""

    def wrap(f: F) -> F:
        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> Any:
            on_terminate()
            try:
                return f(*args, **kwargs)
            except LmzipError as e:
                error(str(e))
                sys.exit(ERROR)
            except Terminated:
                error(interrupted.replace("interrupted", "terminated"))
                sys.exit(TERMINATED)
            except KeyboardInterrupt:
                error(interrupted)
                sys.exit(INTERRUPTED)
            except BrokenPipeError:  # as gzip: the reader is gone, nothing to say
                silence_stdout()
                sys.exit(ERROR)

        return run  # type: ignore[return-value]

    return wrap(fn) if fn is not None else wrap


def shows_progress(enabled: bool) -> bool:
    """Whether a live display may be drawn: asked for (not -q, not --no-progress) and stderr a terminal."""
    return enabled and err.is_terminal


@contextlib.contextmanager
def progress(label: str, enabled: bool, unit: str = "bytes") -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr (only when it is a terminal); yields update(done, total) in ``unit``."""
    if not shows_progress(enabled):
        yield lambda done, total: None
        return
    counts = (DownloadColumn(binary_units=True), TransferSpeedColumn()) if unit == "bytes" else (
        MofNCompleteColumn(), TextColumn(unit))
    cols = (TextColumn("{task.description}"), BarColumn(), *counts, TimeRemainingColumn())
    with Progress(*cols, console=err, transient=True) as bar:
        task = bar.add_task(label, total=None)
        shown = [label]

        def say(text: str) -> None:
            if text != shown[0]:
                shown[0] = text
                bar.update(task, description=text, refresh=True)

        def update(done: int, total: int) -> None:
            say(label)  # the coding goes on: whatever was compiling is done
            bar.update(task, completed=done, total=total)

        with _compiling(lambda: say(label + COMPILING)):
            yield update


COMPILING = " (compiling for this CPU, once)"


@contextlib.contextmanager
def _compiling(started: Callable[[], None]) -> Iterator[None]:
    """Call ``started`` whenever numba starts compiling in this process (a loop's first run on this machine: a
    minute or two, where the bar would otherwise stand still)."""
    try:
        from numba.core import event
    except ImportError:
        yield
        return

    class Note(event.Listener):
        def on_start(self, ev: Any) -> None:
            started()

        def on_end(self, ev: Any) -> None:
            pass

    with event.install_listener("numba:compile", Note()):
        yield


def human(n: float) -> str:
    """Bytes as B / KiB / MiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


@contextlib.contextmanager
def progress_count(label: str, total: int, enabled: bool) -> Iterator[Callable[[str], None]]:
    """A bar over ``total`` items (e.g. compressor × file); yields tick(description)."""
    if not shows_progress(enabled):
        yield lambda what: None
        return
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*cols, console=err, transient=True) as bar:
        task = bar.add_task(label, total=total)

        def tick(what: str) -> None:
            bar.update(task, advance=1, description=f"{label}: {what}")

        yield tick


class StdoutError(LmzipError):
    """Standard output failed (its message names it, not the input)."""


class Stdout:
    """Standard output as a stream; a full disk or a closed pipe is one line, not a traceback."""

    def write(self, data: bytes) -> int:
        write_stdout(data)
        return len(data)


def write_stdout(data: bytes) -> None:
    """Write to standard output; a full disk or a closed pipe is one line, not a traceback."""
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:  # the reader is gone (`| head`): end quietly, as gzip does
        silence_stdout()
        sys.exit(ERROR)
    except OSError as e:
        silence_stdout()
        raise StdoutError(f"standard output: {e.strerror or e}") from e


def silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's last flush cannot fail a second time."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):  # not a file (a test's capture): nothing will flush to a closed pipe
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
