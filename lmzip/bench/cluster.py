"""`lmzip bench --ray [ADDRESS]`: every (compressor, file) pair compressed in one Ray task and decompressed in
another, on a different node wherever the cluster has two, the rows gathered into the one results JSON.
Ray is optional (``pip install 'lmzip[cluster]'``) and imported only here.

Each task gets the input's bytes through Ray's object store, so the nodes need no shared files, but every
node needs lmzip and the models measured (their ids are recorded per row and checked when results merge).
A task takes one CPU, as each compressor in `lmzip bench` runs on one thread. A row records both nodes
(``compress_node``, ``decompress_node``); its peak memory is the larger of the two tasks'.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from lmzip.bench.runner import Row, Source, compress_half, decompress_half, failed, in_order
from lmzip.coding.cluster import LOCAL, available, check_address, connected, node  # noqa: F401 - the CLI's

_BUILT: dict[str, Any] = {}  # in a Ray worker process: compressors built by earlier tasks (models load once)


def _built(name: str):
    from lmzip.bench import compressors

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if name not in _BUILT:
        _BUILT[name] = compressors.build(name)
    return _BUILT[name]


def _compress(name: str, label: str, data: bytes) -> tuple[dict[str, Any], bytes | None]:
    """The first task of a pair: the row so far (its node recorded, and the worker processes the compressor
    used under ``workers``) and the compressed bytes (None: failed)."""
    try:
        comp = _built(name)
        row, blob = compress_half(comp, label, data)
    except Exception as e:  # noqa: BLE001 - reported as a failed row, never a traceback
        return failed(name, label, str(e)), None
    row.compress_node = node()
    return {**asdict(row), "workers": comp.last_workers}, blob


def _decompress(name: str, row: dict[str, Any], blob: bytes, data: bytes) -> dict[str, Any]:
    """The second task of a pair: decompressed (on another node than the first, where there is one) and
    compared with the input."""
    row = dict(row)
    workers = row.pop("workers")
    r = Row(**row)
    try:
        comp = _built(name)
        comp.last_workers = workers  # the frame's groups, as the compressing task used them
        r = decompress_half(comp, r, blob, data)
    except Exception as e:  # noqa: BLE001
        r.error = str(e)
    r.decompress_node = node()
    return asdict(r)


def _elsewhere(ray, here: str, turn: int):
    """Where the second task of a pair runs: a live node with CPUs other than ``here`` (in turn), pinned;
    Ray's choice where there is none."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    others = [n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU") and n["NodeID"] != here]
    return NodeAffinitySchedulingStrategy(others[turn % len(others)], soft=False) if others else "DEFAULT"


def run(names: list[str], sources: list[Source], address: str = LOCAL,
        on_row: Callable[[dict[str, Any]], None] | None = None, cpus: int | None = None) -> list[dict[str, Any]]:
    """Every compressor on every source as Ray tasks on the cluster at ``address``; rows as runner.run's
    (``cpus``: the CPUs a local instance offers, so as many tasks at once; default: every core)."""
    with connected(address, cpus) as ray:
        first = ray.remote(num_cpus=1, max_retries=0, num_returns=2)(_compress)
        second = ray.remote(num_cpus=1, max_retries=0)(_decompress)
        data = {s.label: ray.put(s.read()) for s in sources}
        # a task's result -> (compressor, file, the compressed bytes of a first task, the row of a second's)
        pending: dict[Any, tuple[str, str, Any, dict | None]] = {}
        for n in names:
            for s in sources:
                row_ref, blob_ref = first.remote(n, s.label, data[s.label])
                pending[row_ref] = (n, s.label, blob_ref, None)
        rows: list[dict[str, Any]] = []
        turn = 0  # the decompressing nodes taken in turn
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            name, label, blob, first_row = pending.pop(done[0])
            try:
                row = ray.get(done[0])
            except Exception as e:  # noqa: BLE001 - a worker that died: a failed row, as runner's
                why = f"Ray task failed: {str(e).splitlines()[0]}"
                row = failed(name, label, why) if first_row is None else {  # no sizes: the totals leave it out
                    **first_row, "error": why, "compressed_bytes": None, "compress_s": None}
            if blob is not None and row["error"] is None:  # compressed: decompressed elsewhere next
                strategy = _elsewhere(ray, row["compress_node"], turn)
                turn += 1
                pending[second.options(scheduling_strategy=strategy).remote(name, row, blob, data[label])] = \
                    (name, label, None, row)
                continue
            row.pop("workers", None)
            rows.append(row)
            if on_row:
                on_row(row)
    return in_order(rows, names)
