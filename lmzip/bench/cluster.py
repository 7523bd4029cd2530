"""`lmzip bench --ray [ADDRESS]`: every (compressor, file) pair compressed in one Ray task and decompressed in
another, on a different node wherever the cluster has two, the rows gathered into the one results JSON;
an lmzip compressor on a file of several blocks makes every block such a pair of tasks. Ray is optional
(``pip install 'lmzip[cluster]'``) and imported only here.

Each task gets its bytes through Ray's object store, so the nodes need no shared files, but every node
needs lmzip and the models measured (their ids are recorded per row and checked when results merge). A
task takes one CPU, as each compressor in `lmzip bench` runs on one thread. A row records the nodes
(``compress_node``, ``decompress_node``; per block, comma-separated, for a file of ``blocks`` blocks);
its peak memory is the largest of its tasks', its times the sum of its tasks' (one core's time).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from lmzip.bench.runner import Row, Source, compress_half, decompress_half, failed, in_order, peak_of, reset_peak
from lmzip.coding.cluster import (  # noqa: F401 - LOCAL, available, check_address: the CLI's
    LOCAL,
    available,
    check_address,
    connected,
    decode_block,
    encode_block,
    node,
)

_BUILT: dict[tuple, Any] = {}  # in a Ray worker process: compressors built by earlier tasks (models load once)


def _built(name: str, block_size: int | None):
    from lmzip.bench import compressors

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if (name, block_size) not in _BUILT:
        _BUILT[name, block_size] = compressors.build(name, block_size)
    return _BUILT[name, block_size]


def _compress(name: str, block_size: int | None, label: str, data: bytes) -> tuple[dict[str, Any], bytes | None]:
    """The first task of a pair: the row so far (its node recorded) and the compressed bytes (None: failed)."""
    try:
        comp = _built(name, block_size)
        row, blob = compress_half(comp, label, data)
    except Exception as e:  # noqa: BLE001 - reported as a failed row, never a traceback
        return failed(name, label, str(e)), None
    row.compress_node = node()
    return asdict(row), blob


def _decompress(name: str, block_size: int | None, row: dict[str, Any], blob: bytes, data: bytes) -> dict[str, Any]:
    """The second task of a pair: decompressed (on another node than the first, where there is one) and
    compared with the input."""
    r = Row(**row)
    try:
        comp = _built(name, block_size)
        r = decompress_half(comp, r, blob, data)
    except Exception as e:  # noqa: BLE001
        r.error = str(e)
    r.decompress_node = node()
    return asdict(r)


def _compress_block(name: str, block_size: int | None, data: bytes, index: int, last: bool) -> tuple[dict, bytes]:
    """Block ``index`` of a file, coded as lmzip.coding.stream codes it (one process): its frame, and its
    cost (seconds, peak, bits, tokens) with the compressor's row fields."""
    comp = _built(name, block_size)
    reset_peak()
    t0 = time.perf_counter()
    frame, head, bits = encode_block(data, comp._c.model, comp._c.settings, index, last)
    meta = {"s": time.perf_counter() - t0, "peak": peak_of(), "bits": bits, "tokens": head.n_tokens,
            "bytes": len(frame), "node": node(), "settings": comp.settings, "model_bytes": comp.model_bytes,
            "model_id": comp.model_id}
    return meta, frame


def _decompress_block(name: str, block_size: int | None, frame: bytes, data: bytes, index: int, last: bool) -> dict:
    """A block's frame decoded (on another node than it was coded on) and compared with the block; its
    header must also say it is block ``index`` and whether it is the last, as the file's reader checks."""
    from lmzip.coding.format import unpack

    comp = _built(name, block_size)
    reset_peak()
    t0 = time.perf_counter()
    head, payload = unpack(frame)  # one frame of several (never a short one)
    out = decode_block(head, payload, comp._c.model)
    ok = out == data and head.block == index and head.last == last
    return {"s": time.perf_counter() - t0, "peak": peak_of(), "ok": ok, "node": node()}


@dataclass
class _Blocks:
    """A file of several blocks under one lmzip compressor: its tasks' results as they come."""

    name: str
    label: str
    size: int
    n: int
    data: list = field(default_factory=list)  # each block's bytes in the object store
    coded: dict[int, dict] = field(default_factory=dict)
    checked: dict[int, dict] = field(default_factory=dict)
    error: str | None = None

    @property
    def done(self) -> bool:
        return len(self.checked) == self.n

    def row(self) -> dict[str, Any]:
        """The file's row: sizes, bits and times summed over its blocks, the largest peak, every node."""
        first = next(iter(self.coded.values()), {})
        r = Row(self.name, first.get("settings", ""), self.label, self.size, model_bytes=first.get("model_bytes", 0),
                model_id=first.get("model_id"), blocks=self.n)
        c, d = [self.coded[i] for i in sorted(self.coded)], [self.checked[i] for i in sorted(self.checked)]
        r.compress_node, r.decompress_node = (",".join(x.get("node", "") for x in c),
                                              ",".join(x.get("node", "") for x in d))
        if self.error or len(c) < self.n:
            r.error = self.error or "a block failed"
            return asdict(r)
        r.compressed_bytes, r.compress_s = sum(x["bytes"] for x in c), sum(x["s"] for x in c)
        r.decompress_s = sum(x.get("s", 0.0) for x in d)
        r.ideal_bits, r.tokens = sum(x["bits"] for x in c), sum(x["tokens"] for x in c)
        r.peak_mib = max((x["peak"] for x in c + d if x.get("peak") is not None), default=None)
        r.verified = all(x.get("ok") for x in d)
        if not r.verified:
            r.error = "decompressed bytes differ from the original"
        return asdict(r)


def crossed(row: dict[str, Any]) -> bool:
    """Whether every block of a row was decompressed on another node than the one it was compressed on."""
    c, d = (row.get("compress_node") or "").split(","), (row.get("decompress_node") or "").split(",")
    return bool(c[0]) and len(c) == len(d) and all(a and b and a != b for a, b in zip(c, d, strict=True))


def _elsewhere(ray, here: str, turn: int):
    """Where the second task of a pair runs: a live node with CPUs other than ``here`` (in turn), pinned;
    Ray's choice where there is none."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    others = [n["NodeID"] for n in ray.nodes() if n["Alive"] and n["Resources"].get("CPU") and n["NodeID"] != here]
    return NodeAffinitySchedulingStrategy(others[turn % len(others)], soft=False) if others else "DEFAULT"


def _why(e: Exception) -> str:
    """A failed task in one line: Ray's first line names the task, its last the error."""
    lines = [x for x in str(e).splitlines() if x.strip()] or [type(e).__name__]
    return f"Ray task failed: {lines[-1].strip()}"


def run(names: list[str], sources: list[Source], address: str = LOCAL,
        on_row: Callable[[dict[str, Any]], None] | None = None, cpus: int | None = None,
        block_size: int | None = None) -> list[dict[str, Any]]:
    """Every compressor on every source as Ray tasks on the cluster at ``address``; rows as runner.run's
    (``cpus``: the CPUs a local instance offers, so as many tasks at once; default: every core;
    ``block_size``: lmzip's compressors code in blocks of that many bytes, each block of a larger file a
    pair of tasks of its own)."""
    from lmzip.bench import compressors
    from lmzip.coding.settings import BLOCK_SIZE

    lm = {n for n, e in compressors.registry().items() if e.lm}
    per_block = block_size or BLOCK_SIZE
    with connected(address, cpus) as ray:
        first = ray.remote(num_cpus=1, max_retries=0, num_returns=2)(_compress)
        second = ray.remote(num_cpus=1, max_retries=0)(_decompress)
        first_b = ray.remote(num_cpus=1, max_retries=0, num_returns=2)(_compress_block)
        second_b = ray.remote(num_cpus=1, max_retries=0)(_decompress_block)
        # a task's result -> what it was: ("pair", compressor, file, compressed bytes | None, first row | None)
        # or ("block", _Blocks, index, frame | None)
        pending: dict[Any, tuple] = {}
        rows: list[dict[str, Any]] = []
        for s in sources:
            data = s.read()
            spans = [(a, min(a + per_block, len(data))) for a in range(0, len(data), per_block)]
            blocks = [ray.put(data[a:b]) for a, b in spans] if len(spans) > 1 and lm & set(names) else []
            whole = ray.put(data) if not blocks or set(names) - lm else None  # only where a task reads it whole
            for n in names:
                if n in lm and blocks:
                    f = _Blocks(n, s.label, len(data), len(spans), blocks)
                    for i, ref in enumerate(blocks):
                        meta, frame = first_b.remote(n, block_size, ref, i, i == len(blocks) - 1)
                        pending[meta] = ("block", f, i, frame)
                else:
                    row_ref, blob_ref = first.remote(n, block_size, s.label, whole)
                    pending[row_ref] = ("pair", n, s.label, blob_ref, None, whole)
        turn = 0  # the decompressing nodes taken in turn

        def finished(row: dict[str, Any]) -> None:
            rows.append(row)
            if on_row:
                on_row(row)

        while pending:
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            what = pending.pop(ref)
            if what[0] == "block":
                _, f, i, frame = what
                try:
                    result = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - a block that failed fails its file's row
                    f.error = f.error or _why(e)
                    f.checked[i] = {}
                    result = None
                if result is not None and frame is not None:  # coded: checked elsewhere next
                    f.coded[i] = result
                    task = second_b.options(scheduling_strategy=_elsewhere(ray, result["node"], turn))
                    pending[task.remote(f.name, block_size, frame, f.data[i], i, i == f.n - 1)] = ("block", f, i, None)
                    turn += 1
                elif result is not None:
                    f.checked[i] = result
                if f.done:
                    finished(f.row())
                continue
            _, name, label, blob, first_row, whole = what
            try:
                row = ray.get(ref)
            except Exception as e:  # noqa: BLE001 - a worker that died: a failed row, as runner's
                row = failed(name, label, _why(e)) if first_row is None else {  # no sizes: the totals skip it
                    **first_row, "error": _why(e), "compressed_bytes": None, "compress_s": None}
            if blob is not None and row["error"] is None:  # compressed: decompressed elsewhere next
                task = second.options(scheduling_strategy=_elsewhere(ray, row["compress_node"], turn))
                turn += 1
                pending[task.remote(name, block_size, row, blob, whole)] = ("pair", name, label, None, row, whole)
                continue
            finished(row)
    return in_order(rows, names)
