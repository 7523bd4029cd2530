"""One stdout and one stderr rich console, error/warning lines, and the progress bar."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

# Tables keep their columns when piped: a pipe gets a wide console instead of rich's 80 columns.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, highlight=False, soft_wrap=True)

OK, ERROR, WARNING = 0, 1, 2


def stdout_is_terminal() -> bool:
    """Whether standard output is a terminal (compressed data is never written to one)."""
    return sys.stdout.isatty()


def error(message: str) -> None:
    """``lmzip: message`` on stderr (the caller decides the exit status)."""
    err.print(f"lmzip: {message}", markup=False)


@contextlib.contextmanager
def progress(label: str, enabled: bool) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr (only when it is a terminal); yields update(done, total)."""
    if not enabled or not err.is_terminal:
        yield lambda done, total: None
        return
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("tokens"),
            TimeRemainingColumn())
    with Progress(*cols, console=err, transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


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
    if not enabled or not err.is_terminal:
        yield lambda what: None
        return
    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*cols, console=err, transient=True) as bar:
        task = bar.add_task(label, total=total)

        def tick(what: str) -> None:
            bar.update(task, advance=1, description=f"{label}: {what}")

        yield tick
