"""Run independent segment groups side by side in worker processes (one thread each).

Each group is the same computation wherever it runs, so a group coded in a worker decodes in the
main process and vice versa: the number of workers is a speed choice, never part of the format."""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import queue
import signal
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

_MODEL = None
_LIVE = None  # a worker's progress queue
REPORT_EVERY = 0.2  # seconds between a worker's progress reports


def _init(path: str | None, name: str, seed: int | None, model_id: bytes, live=None) -> None:
    """Load the parent's model in this worker: from its folder, or rebuilt from preset and seed
    (``live``: the queue this worker's groups report their progress through)."""
    global _MODEL, _LIVE
    _LIVE = live
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _tie_to_parent()
    if seed is not None:  # seeded random weights: rebuilt here and checked against the parent's id
        from lmzip.models.registry import find_by_id

        _MODEL = find_by_id(model_id, name, seed=seed)
    else:
        from lmzip.models.checkpoint import load_model

        _MODEL = load_model(path, name)


def _tie_to_parent() -> None:
    """A worker leaves Ctrl-C to its parent (which stops it, so no second message or traceback) and
    dies with it: killed when the parent dies, even by SIGKILL (Linux's parent-death signal)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux: the pool's own pipes still end it
        return
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Kill the workers at once: after an error or Ctrl-C their groups are of no use."""
    for proc in list(getattr(pool, "_processes", {}).values()):
        proc.kill()
    pool.shutdown(wait=True, cancel_futures=True)


def _call(fn: Callable, args: tuple, group: int | None = None) -> Any:
    """Run one group in this worker; with ``group``, passing fn a progress callback that reports
    ``(group, done)`` to the parent at most every REPORT_EVERY seconds."""
    if group is None or _LIVE is None:
        return fn(_MODEL, *args)
    last = [0.0]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= REPORT_EVERY or done >= total:
            last[0] = now
            _LIVE.put((group, done))

    return fn(_MODEL, *args, report)


class _Tally:
    """Units done in every group, reported as one sum: this process's groups directly, the workers'
    through a queue that is drained whenever something reports."""

    def __init__(self, progress: Callable[[int, int], None], sizes: list[int], live=None):
        self.progress, self.sizes, self.done, self.live = progress, sizes, [0] * len(sizes), live

    def local(self, i: int) -> Callable[[int, int], None]:
        """The progress callback of group ``i`` running in this process."""
        def report(done: int, total: int) -> None:
            self.done[i] = done
            self.report()
        return report

    def finished(self, i: int) -> None:
        self.done[i] = self.sizes[i]
        self.report()

    def report(self) -> None:
        while self.live is not None:
            try:
                i, d = self.live.get_nowait()
            except queue.Empty:
                break
            self.done[i] = max(self.done[i], min(d, self.sizes[i]))
        self.progress(sum(self.done), sum(self.sizes))


def map_groups(fn: Callable, model, tasks: list[tuple], workers: int, progress=None,
               sizes: list[int] | None = None) -> list[Any]:
    """``[fn(model, *task) for task in tasks]`` using up to ``workers`` processes, this one included.

    With ``progress``, each call also gets a callback ``(done, total)`` for its group, and
    ``progress`` sees the sum over the groups (``sizes``: each group's total), live, wherever they
    run. This process codes the first group itself while the workers start (a worker needs ~1.3 s to
    import torch and load the model), so two groups on two cores cost one worker, not two."""
    tally = _Tally(progress, sizes or [0] * len(tasks)) if progress else None
    if len(tasks) == 1:
        return [fn(model, *tasks[0], progress)] if progress else [fn(model, *tasks[0])]
    if workers <= 1 or (model.path is None and model.seed is None):  # one process, or a model only in memory
        out = []
        for i, t in enumerate(tasks):
            out.append(fn(model, *t, tally.local(i)) if tally else fn(model, *t))
            if tally:
                tally.finished(i)
        return out
    ctx = mp.get_context("spawn")
    live = ctx.Queue() if tally else None
    pool = ProcessPoolExecutor(min(workers - 1, len(tasks) - 1), mp_context=ctx, initializer=_init,
                               initargs=(model.path and str(model.path), model.name, model.seed, model.model_id,
                                         live))
    try:
        futures = [pool.submit(_call, fn, t, i if tally else None) for i, t in enumerate(tasks[1:], start=1)]
        if tally:
            tally.live = live  # the workers' reports join this process's from now on
            out = [fn(model, *tasks[0], tally.local(0))]
            tally.finished(0)
            while not all(f.done() for f in futures):  # report the workers' progress while they finish
                wait(futures, timeout=REPORT_EVERY, return_when=FIRST_COMPLETED)
                tally.report()
        else:
            out = [fn(model, *tasks[0])]
        for i, f in enumerate(futures, start=1):
            out.append(f.result())
            if tally:
                tally.finished(i)
    except BaseException:
        _stop(pool)
        raise
    finally:
        if live is not None:
            live.close()
            live.cancel_join_thread()
    pool.shutdown()
    return out


def default_workers() -> int:
    """How many processes to use: one per core this process may run on."""
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
