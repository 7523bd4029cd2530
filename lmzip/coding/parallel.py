"""Run independent segment groups side by side in worker processes (one thread each).

Each group is the same computation wherever it runs, so a group coded in a worker decodes in the
main process and vice versa: the number of workers is a speed choice, never part of the format."""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

_MODEL = None


def _init(path: str | None, name: str, seed: int | None, model_id: bytes) -> None:
    """Load the parent's model in this worker: from its folder, or rebuilt from preset and seed."""
    global _MODEL
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if seed is not None:  # seeded random weights: rebuilt here and checked against the parent's id
        from lmzip.models.registry import find_by_id

        _MODEL = find_by_id(model_id, name, seed=seed)
    else:
        from lmzip.models.checkpoint import load_model

        _MODEL = load_model(path, name)


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
    with ProcessPoolExecutor(min(workers - 1, len(tasks) - 1), mp_context=ctx, initializer=_init,
                             initargs=(model.path and str(model.path), model.name, model.seed, model.model_id)) as pool:
        futures = [pool.submit(_call, fn, t) for t in tasks[1:]]
        out = [fn(model, *tasks[0])]
        if done:
            done(0)
        for i, f in enumerate(futures, start=1):
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
