"""`lmzip bench --ray [ADDRESS]`: every (compressor, file) pair one Ray task, the rows gathered into the one
results JSON. Ray is optional (``pip install 'lmzip[cluster]'``) and imported only here.

Each task gets the input's bytes through Ray's object store, so the nodes need no shared files, but every
node needs lmzip and the models measured (their ids are recorded per row and checked when results merge).
A task takes one CPU, as each compressor in `lmzip bench` runs on one thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from lmzip.bench.runner import Source, failed, in_order, measure
from lmzip.coding.cluster import LOCAL, available, check_address, connected  # noqa: F401 - the CLI's entry points

_BUILT: dict[str, Any] = {}  # in a Ray worker process: compressors built by earlier tasks (models load once)


def _pair(name: str, label: str, data: bytes) -> dict[str, Any]:
    """One Ray task: compressor ``name`` on one input (the same measurement as runner's worker processes)."""
    from lmzip.bench import compressors

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        if name not in _BUILT:
            _BUILT[name] = compressors.build(name)
    except Exception as e:  # noqa: BLE001 - reported as a failed row, never a traceback
        return failed(name, label, str(e))
    return measure(_BUILT[name], label, data)


def run(names: list[str], sources: list[Source], address: str = LOCAL,
        on_row: Callable[[dict[str, Any]], None] | None = None, cpus: int | None = None) -> list[dict[str, Any]]:
    """Every compressor on every source as Ray tasks on the cluster at ``address``; rows as runner.run's
    (``cpus``: the CPUs a local instance offers, so as many tasks at once; default: every core)."""
    with connected(address, cpus) as ray:
        task = ray.remote(num_cpus=1, max_retries=0)(_pair)
        data = {s.label: ray.put(s.read()) for s in sources}
        pending = {task.remote(n, s.label, data[s.label]): (n, s.label) for n in names for s in sources}
        rows = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            name, label = pending.pop(done[0])
            try:
                row = ray.get(done[0])
            except Exception as e:  # noqa: BLE001 - a worker that died: a failed row, as runner's
                row = failed(name, label, f"Ray task failed: {str(e).splitlines()[0]}")
            rows.append(row)
            if on_row:
                on_row(row)
    return in_order(rows, names)
