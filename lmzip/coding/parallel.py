"""Run independent segment groups side by side in worker processes (one thread each).

Each group is the same computation wherever it runs, so a group coded in a worker decodes in the
main process and vice versa: the number of workers is a speed choice, never part of the format."""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

_MODEL = None


def _init(path: str | None, name: str, seed: int | None, model_id: bytes) -> None:
    """Load the parent's model in this worker: from its folder, or rebuilt from preset and seed."""
    global _MODEL
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


def _call(fn: Callable, args: tuple) -> Any:
    return fn(_MODEL, *args)


def map_groups(fn: Callable, model, tasks: list[tuple], workers: int, progress=None,
               done: Callable[[int], None] | None = None) -> list[Any]:
    """``[fn(model, *task) for task in tasks]`` using up to ``workers`` processes, this one included.

    One task (or one worker) runs here, with ``progress`` passed on. Otherwise this process codes
    the first group itself while the workers start (a worker needs ~1.3 s to import torch and load
    the model), so two groups on two cores cost one worker, not two."""
    if len(tasks) == 1:
        return [fn(model, *tasks[0], progress)]
    if workers <= 1 or (model.path is None and model.seed is None):  # one process, or a model only in memory
        out = []
        for i, t in enumerate(tasks):
            out.append(fn(model, *t))
            if done:
                done(i)
        return out
    ctx = mp.get_context("spawn")
    pool = ProcessPoolExecutor(min(workers - 1, len(tasks) - 1), mp_context=ctx, initializer=_init,
                               initargs=(model.path and str(model.path), model.name, model.seed, model.model_id))
    try:
        futures = [pool.submit(_call, fn, t) for t in tasks[1:]]
        out = [fn(model, *tasks[0])]
        if done:
            done(0)
        for i, f in enumerate(futures, start=1):
            out.append(f.result())
            if done:
                done(i)
    except BaseException:
        _stop(pool)
        raise
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
