"""Run independent segment groups side by side in worker processes (one thread each).

Each group is the same computation wherever it runs (its batch shape, thread count and dtype are
fixed by the header), so a group coded in a worker decodes in the main process and vice versa:
the number of workers is a speed choice, never part of the format."""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

_MODEL = None


def _init(path: str, name: str) -> None:
    global _MODEL
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from .checkpoint import load_model

    _MODEL = load_model(path, name)


def _call(fn: Callable, args: tuple) -> Any:
    return fn(_MODEL, *args)


def map_groups(fn: Callable, model, tasks: list[tuple], workers: int,
               done: Callable[[int], None] | None = None) -> list[Any]:
    """``[fn(model, *task) for task in tasks]``, in up to ``workers`` processes when that helps."""
    if workers <= 1 or len(tasks) <= 1 or model.path is None:
        out = []
        for i, t in enumerate(tasks):
            out.append(fn(model, *t))
            if done:
                done(i)
        return out
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(min(workers, len(tasks)), mp_context=ctx, initializer=_init,
                             initargs=(str(model.path), model.name)) as pool:
        futures = [pool.submit(_call, fn, t) for t in tasks]
        out = []
        for i, f in enumerate(futures):
            out.append(f.result())
            if done:
                done(i)
        return out


def default_workers() -> int:
    """How many processes to use: one per core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
