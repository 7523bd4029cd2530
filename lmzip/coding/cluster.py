"""The blocks of one input as Ray tasks (`lmzip compress --ray`, `decompress --ray`): the same frames as
lmzip.coding.stream writes and reads, in the same order, so a file coded on a cluster is byte-identical
to one coded here and either decodes anywhere. Ray is optional (``pip install 'lmzip[cluster]'``) and
imported only here; `lmzip bench --ray` (lmzip.bench.cluster) starts and reaches Ray the same way.

Each task codes one block in one process with one thread (the bytes never depend on it) and gets the
block through Ray's object store, so nodes share no files; tasks are spread over the nodes (Ray's SPREAD),
and the node of every block is recorded (``Totals.nodes``, shown by ``-v``); every node needs lmzip and the model (by
name, folder or, for seeded weights, preset and seed; a decoding task finds it by the id each frame
records, as `lmzip -d` does). At most two tasks per CPU are in flight, so memory stays a few blocks.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import secrets
import sys
from collections import deque
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, BinaryIO

from lmzip.coding import stream
from lmzip.coding.format import read_frames
from lmzip.coding.settings import Settings
from lmzip.errors import LmzipError

if TYPE_CHECKING:
    from lmzip.models.checkpoint import LoadedModel

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


@contextlib.contextmanager
def connected(address: str = LOCAL, cpus: int | None = None) -> Iterator[Any]:
    """Ray, started on this machine (``local``: its services on loopback, ``cpus`` of them) or joined at
    ``address``, shut down afterwards; one line if it cannot be reached."""
    if address == LOCAL:
        own_token()
    import ray

    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
    try:
        if address == LOCAL:
            ray.init(_node_ip_address="127.0.0.1", num_cpus=cpus, **quiet)
        else:
            ray.init(address=address, **quiet)
    except Exception as e:  # noqa: BLE001 - Ray's own errors run to many lines
        raise LmzipError(f"--ray {address}: cannot start or reach Ray: {str(e).splitlines()[0]}") from e
    try:
        yield ray
    finally:
        ray.shutdown()


def own_token() -> bool:
    """Before a local instance starts: a token of this process's own, which the instance inherits (Ray
    would otherwise write one to ~/.ray/auth_token, a file the user never asked for). Only where the user
    set no token and Ray is not yet imported (it reads the mode then); the process keeps it, so a later
    connection from it to another cluster needs that cluster's token set beforehand."""
    if "ray" in sys.modules or any(k in os.environ for k in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH",
                                                               "RAY_AUTH_MODE")):
        return False
    os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(16))
    return True


_MODELS: dict[Any, Any] = {}  # in a Ray worker: models loaded by earlier tasks


def _model(key: tuple) -> LoadedModel | None:
    """A worker's model: ("load", name or folder, seed) to compress, ("id", id, name, hint, seed) to decode."""
    from lmzip.models import registry

    if key not in _MODELS:
        if key[0] == "load":
            _MODELS[key] = None if key[1] is None else (registry.scratch(key[1], key[2]) if key[2] is not None
                                                        else registry.load(key[1]))
        else:
            _MODELS[key] = registry.find_by_id(key[1], key[2], key[3], key[4])
    return _MODELS[key]


def node() -> str:
    """The Ray node this task runs on (its id in hex)."""
    import ray

    return ray.get_runtime_context().get_node_id()


def encode_block(data: bytes, model: LoadedModel | None, settings: Settings, block: int,
                 last: bool) -> tuple[bytes, Any, float]:
    """Block ``block`` coded as lmzip.coding.stream codes it, in this process on one thread (a task's
    share): (frame, header, bits)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return stream._encode(data, model, replace(settings, threads=1), None, 1, block, last)


def decode_block(head, payload: bytes, model: LoadedModel | None) -> bytes:
    """The mirror image of encode_block: a frame decoded and checked as lmzip.coding.stream does."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return stream.decode_frame(head, payload, (lambda h: model) if model is not None else None, None, 1, "cpu", 1)


def _encode(key: tuple, settings: Settings, data: bytes, block: int, last: bool) -> tuple[str, Any]:
    """One task: encode_block with the worker's model; (node, (frame, header, bits) or an error)."""
    try:
        return node(), encode_block(data, _model(key), settings, block, last)
    except LmzipError as e:
        return node(), (type(e), str(e))


def _decode(key: tuple | None, head, payload: bytes) -> tuple[str, Any]:
    """One task: decode_block with the worker's model; (node, the bytes or an error)."""
    try:
        return node(), decode_block(head, payload, _model(key) if key else None)
    except LmzipError as e:
        return node(), (type(e), str(e))


def _result(out: stream.Totals, value: tuple[str, Any]) -> Any:
    """A task's result (its error raised here), its node recorded in ``out``."""
    where, value = value
    out.nodes.append(where)
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], type):
        raise value[0](value[1])
    return value


def _in_order(ray, jobs: Iterator[tuple[Any, Any]], write, out: stream.Totals) -> None:
    """Submit ``jobs`` (a remote call's object ref, what ``write`` needs with its result) keeping at most two
    per CPU in flight, and write the results in submission order (their nodes recorded in ``out``)."""
    window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    pending: deque = deque()
    for job in jobs:
        pending.append(job)
        if len(pending) >= window:
            ref, what = pending.popleft()
            write(_result(out, ray.get(ref)), what)
    while pending:
        ref, what = pending.popleft()
        write(_result(out, ray.get(ref)), what)


def compress_stream(src: BinaryIO, dst: BinaryIO, model: LoadedModel | None, settings: Settings,
                    address: str = LOCAL, cpus: int | None = None, progress=None) -> stream.Totals:
    """lmzip.coding.stream.compress_stream with every block a Ray task; the same bytes."""
    if model is not None and model.path is None and model.seed is None:
        raise LmzipError("--ray needs a model in a folder or a preset with a seed (this one is only in memory)")
    key = ("load", None, None) if model is None else ("load", model.name if model.seed is not None
                                                        else str(model.path), model.seed)
    out = stream.Totals()
    with connected(address, cpus) as ray:
        task = ray.remote(num_cpus=1, max_retries=0, scheduling_strategy="SPREAD")(_encode)

        def jobs():
            for i, (data, last) in enumerate(stream.blocks(src, settings.block_size)):
                yield task.remote(key, settings, ray.put(data), i, last), len(data)

        def write(result, size):
            blob, head, bits = result
            dst.write(blob)
            out.record(head, size, len(blob), bits)
            if progress:
                progress(out.original, out.original)

        _in_order(ray, jobs(), write, out)
    return out


def decompress_stream(src: BinaryIO, dst: BinaryIO, hint: str | None = None, address: str = LOCAL,
                      cpus: int | None = None, progress=None) -> stream.Totals:
    """lmzip.coding.stream.decompress_stream with every frame a Ray task (``hint``: -m's model); the frames
    are read and checked here, in order, and each block is written only once it is decoded and checked."""
    out = stream.Totals()
    with connected(address, cpus) as ray:
        task = ray.remote(num_cpus=1, max_retries=0, scheduling_strategy="SPREAD")(_decode)

        def jobs():
            for head, payload in read_frames(src):
                coded = not (head.stored or head.counting)
                key = ("id", head.model_id, head.model_name, hint, head.seed) if coded else None
                yield task.remote(key, head, ray.put(payload)), (head, head.size + len(payload))

        def write(data, what):
            head, size = what
            dst.write(data)
            out.record(head, len(data), size)
            if progress:
                progress(out.compressed, out.compressed)

        _in_order(ray, jobs(), write, out)
    return out
