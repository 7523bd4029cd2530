"""`lmzip bench --ray [ADDRESS]`: every (compressor, file) pair one Ray task, the rows gathered into the one
results JSON. Ray is optional (``pip install 'lmzip[cluster]'``) and imported only here.

Each task gets the input's bytes through Ray's object store, so the nodes need no shared files, but every
node needs lmzip and the models measured (their ids are recorded per row and checked when results merge).
A task takes one CPU, as each compressor in `lmzip bench` runs on one thread.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Callable
from typing import Any

from lmzip.bench.runner import Source, failed, in_order, measure
from lmzip.errors import LmzipError

LOCAL = "local"  # --ray without an address: a Ray instance of this machine, started and stopped here


def available() -> bool:
    """Whether Ray is installed."""
    return importlib.util.find_spec("ray") is not None


def check_address(address: str) -> str:
    """``local``, ``auto`` (the cluster this machine belongs to), HOST:PORT or ray://HOST:PORT; else one line
    (``--ray FILE`` would otherwise take the first file for an address)."""
    if address in (LOCAL, "auto") or ":" in address:
        return address
    raise LmzipError(f"--ray {address!r}: not a Ray address (HOST:PORT, ray://HOST:PORT, auto); "
                     "give it as --ray=ADDRESS, or put --ray after the files")


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
    import ray

    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
    try:
        if address == LOCAL:  # this machine only: its services listen on loopback
            ray.init(_node_ip_address="127.0.0.1", num_cpus=cpus, **quiet)
        else:
            ray.init(address=address, **quiet)
    except Exception as e:  # noqa: BLE001 - Ray's own errors run to many lines
        raise LmzipError(f"--ray {address}: cannot start or reach Ray: {str(e).splitlines()[0]}") from e
    try:
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
    finally:
        ray.shutdown()
    return in_order(rows, names)
