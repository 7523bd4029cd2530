"""Run independent segment groups side by side, in threads of this process (one torch thread each).

Each group is the same computation wherever it runs, so a group coded on one thread decodes on
any other: the number of workers is a speed choice, never part of the format. The heavy parts of a
group's step (torch's products, the compiled attention and mixing loops) release the GIL, so groups
in threads run as fast as in worker processes (measured: 17.3 s against 20.4 s for 400 KB of
enwik6 at the default, two groups on two cores) and share one torch, one model and one set of
compiled loops (1,122 MiB against 1,453 MiB summed)."""

from __future__ import annotations

import ctypes
import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Any

REPORT_EVERY = 0.2  # seconds between progress reports while groups run


class Stopped(Exception):
    """A group told to stop: another group failed or gave up, or the run was interrupted."""


class _Groups:
    """The running groups' shared state: units done per group, and whether to stop."""

    def __init__(self, n: int):
        self.done, self.stop = [0] * n, threading.Event()

    def callback(self, i: int) -> Callable[[int, int], None]:
        """Group ``i``'s progress callback, called every step: records where it is, stops when told."""
        def report(done: int, total: int) -> None:
            self.done[i] = done
            if self.stop.is_set():
                raise Stopped
        return report

    def run(self, fn: Callable, model, task: tuple, i: int) -> Any:
        return fn(model, *task, self.callback(i))


M_ARENA_MAX = -8  # glibc's mallopt parameter
ARENAS = 2  # 400 KB of enwik6, two groups: 16.0-17.3 s and 936-968 MiB; one arena 20.1 s (threads wait on its
# lock), one per thread (glibc's default) 17.5 s and 1,009 MiB


@functools.lru_cache(maxsize=1)
def few_arenas() -> None:
    """Let the threads share ARENAS malloc arenas (lmzip calls it on import, before torch starts its
    threads): glibc gives each new thread an arena of its own, which keeps the memory freed in it
    (two groups of 2 MB of Chinese text at the default: 1,090 MiB peak against 1,163)."""
    _glibc("mallopt", M_ARENA_MAX, ARENAS)


def give_back() -> None:
    """Hand the memory freed so far back to the system: glibc keeps what a block's groups freed in its
    arenas, where the next block's counted pass, whose tables are fresh pages, cannot reuse it (the
    default on 20 MB peaked at 1,084 MiB, over one 4 MiB block's 949)."""
    _glibc("malloc_trim", 0)


def _glibc(name: str, *args: int) -> None:
    """Call one of glibc's malloc functions; under another C library, nothing."""
    try:
        getattr(ctypes.CDLL(None), name)(*args)
    except (OSError, AttributeError):  # pragma: no cover - another C library
        pass


def map_groups(fn: Callable, model, tasks: list[tuple], workers: int, progress=None,
               sizes: list[int] | None = None, together: bool = False) -> list[Any]:
    """``[fn(model, *task, progress) for task in tasks]``, up to ``workers`` at once in threads
    (``together``: every task in a thread of its own, which take turns: lmzip.coding.mix.Race).

    ``progress`` sees the sum over the groups (``sizes``: each group's total), reported from this
    thread. Where a group raises (a give-up, corrupt data) or this thread is interrupted (Ctrl-C, a
    signal's exception), the other groups stop at their next step and the first error is raised."""
    sizes = sizes or [0] * len(tasks)
    if together:
        workers = len(tasks)
    if workers <= 1 or len(tasks) == 1:
        out = []
        for i, t in enumerate(tasks):
            out.append(fn(model, *t, _local(progress, sizes, i)) if progress else fn(model, *t))
        return out
    groups = _Groups(len(tasks))
    pool = ThreadPoolExecutor(min(workers, len(tasks)), thread_name_prefix="lmzip-group")
    futures = [pool.submit(groups.run, fn, model, t, i) for i, t in enumerate(tasks)]
    try:
        while True:
            finished, running = wait(futures, timeout=REPORT_EVERY, return_when=FIRST_EXCEPTION)
            failed = [f for f in futures if f.done() and f.exception() is not None]
            if failed:
                raise failed[0].exception()
            if progress:
                progress(sum(groups.done[i] if not f.done() else sizes[i] for i, f in enumerate(futures)),
                         sum(sizes))
            if not running:
                return [f.result() for f in futures]
    except BaseException:
        groups.stop.set()  # the others end at their next step
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _local(progress, sizes: list[int], i: int) -> Callable[[int, int], None]:
    """Group ``i``'s progress, run in this thread, as the sum over all groups (the earlier ones done)."""
    before, total = sum(sizes[:i]), sum(sizes)

    def report(done: int, of: int) -> None:
        progress(before + done, total)

    return report


def default_workers() -> int:
    """How many groups to run at once: one per core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def available_memory() -> int | None:
    """Bytes of memory this machine can still give (Linux's MemAvailable), or None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None
