"""Run the benchmark: every compressor on every file, each result decompressed and compared before
it is reported. Each compressor runs in its own process, so its peak memory is its own."""

from __future__ import annotations

import datetime
import importlib.metadata as md
import multiprocessing as mp
import os
import platform
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from lmzip import __version__
from lmzip.errors import LmzipError
from lmzip.models.data import list_files, load_dataset_texts

# The default run (under ~15 minutes on a 2-core machine): text, code and markup from corpora/.
DEFAULT_FILES = ["canterbury/alice29.txt", "canterbury/asyoulik.txt", "canterbury/cp.html", "canterbury/fields.c",
                 "canterbury/grammar.lsp", "canterbury/xargs.1", "calgary/book1", "calgary/paper1",
                 "calgary/progc", "enwik/enwik5"]


@dataclass
class Source:
    """One benchmark input: a label, the file its bytes come from, and an optional byte limit."""

    label: str
    path: str
    limit: int | None = None
    note: str = ""

    def read(self) -> bytes:
        data = Path(self.path).read_bytes()
        return data[: self.limit] if self.limit else data


@dataclass
class Row:
    """One compressor on one file; every size is in bytes and every speed in KB/s (1000 bytes)."""

    compressor: str
    settings: str
    file: str
    original_bytes: int
    compressed_bytes: int | None = None
    model_bytes: int = 0
    ideal_bits: float | None = None
    tokens: int | None = None
    compress_s: float | None = None
    decompress_s: float | None = None
    peak_mib: float | None = None
    verified: bool = False
    error: str | None = None
    # what makes rows of one compressor comparable: merging results refuses rows that disagree on these
    lmzip: str = __version__
    model_id: str | None = None
    # `lmzip bench --ray`: the Ray nodes that compressed and decompressed (different wherever the cluster has two;
    # a file of several blocks, each block a task: the nodes of its blocks, comma-separated, and how many blocks)
    compress_node: str | None = None
    decompress_node: str | None = None
    blocks: int | None = None


def bundled_corpus(pkg: Path | None = None) -> Path:
    """The bundled corpora: ``lmzip/corpora`` in an install (package data), ``corpora/`` in a source checkout."""
    pkg = pkg or Path(__file__).resolve().parent.parent
    for root in (pkg / "corpora", pkg.parent / "corpora"):
        if (root / "MANIFEST.tsv").is_file():
            return root
    raise LmzipError("this lmzip has no bundled corpora; give --corpus DIR or files to benchmark")


def corpus_sources(root: Path, files: list[str] | None, limit: int | None) -> list[Source]:
    """Files under ``root`` (all of them, or the named ones: exact relative paths or base names)."""
    if not root.is_dir():
        raise LmzipError(f"{root}: corpus folder not found")
    everything = [p for p in list_files([root]) if p.suffix not in (".tsv", ".md")]
    rel = {str(p.relative_to(root)): p for p in everything}
    if files is None:
        chosen = list(rel.items())
    else:
        chosen = []
        for want in files:
            hits = [(k, p) for k, p in rel.items() if k == want or p.name == want]
            if not hits:
                raise LmzipError(f"{want}: no such file in {root}")
            chosen += hits
    return [Source(k, str(p), limit) for k, p in chosen]


def path_sources(paths: list[str], limit: int | None) -> list[Source]:
    """Files and folders given on the command line."""
    return [Source(str(p), str(p), limit) for p in list_files(paths)]


def dataset_source(name: str, split: str, column: str, limit: int | None, workdir: Path) -> Source:
    """A local or cached `datasets` dataset: the UTF-8 of its text column joined by newlines."""
    texts = load_dataset_texts(name, split, column)
    path = workdir / "dataset.bin"
    path.write_bytes(b"\n".join(texts))
    return Source(f"{name}:{split}:{column}", str(path), limit,
                  note="UTF-8 of the dataset's text column joined by newlines (not the original files' bytes)")


def reset_peak() -> None:
    """Start this process's peak RSS afresh: each measurement has its own."""
    try:  # resets VmHWM (peak RSS) on Linux, so each measurement has its own peak
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_of() -> float | None:
    """This process's peak resident memory in MiB (a compressor's groups run in its threads)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def measure(comp, label: str, data: bytes) -> dict[str, Any]:
    """One compressor on one input: compress, decompress, compare, time and peak memory; a row as a dict."""
    row, blob = compress_half(comp, label, data)
    return asdict(decompress_half(comp, row, blob, data, fresh=False) if blob is not None else row)


def compress_half(comp, label: str, data: bytes) -> tuple[Row, bytes | None]:
    """The first half of `measure`: the row with the compressed size, time and peak so far, and the
    compressed bytes (None, and the error in the row, if compressing failed)."""
    row = Row(comp.name, comp.settings, label, len(data), model_bytes=comp.model_bytes, model_id=comp.model_id)
    try:
        reset_peak()
        t0 = time.perf_counter()
        blob = comp.compress(data)
        row.compressed_bytes, row.compress_s = len(blob), time.perf_counter() - t0
        row.peak_mib = peak_of()
        if comp.last_ideal is not None:
            row.ideal_bits, row.tokens = comp.last_ideal
        return row, blob
    except Exception as e:  # noqa: BLE001
        row.error = f"{type(e).__name__}: {e}"
        return row, None


def decompress_half(comp, row: Row, blob: bytes, data: bytes, fresh: bool = True) -> Row:
    """The second half of `measure`: decompress ``blob``, compare it with ``data``, time it; ``fresh``: in
    another process than the first half (the peak is then the larger of the two processes')."""
    try:
        if fresh:
            reset_peak()
        t0 = time.perf_counter()
        out = comp.decompress(blob)
        row.decompress_s = time.perf_counter() - t0
        peak = peak_of()
        row.peak_mib = max((p for p in (row.peak_mib, peak) if p is not None), default=None)
        row.verified = out == data
        if not row.verified:
            row.error = "decompressed bytes differ from the original"
    except Exception as e:  # noqa: BLE001 - a row without sizes, so the totals leave it out
        row.error = f"{type(e).__name__}: {e}"
        row.compressed_bytes = row.compress_s = None
    return row


def failed(name: str, label: str, error: str) -> dict[str, Any]:
    """The row of a measurement that could not run (the compressor failed to build, its process died)."""
    return asdict(Row(name, "", label, 0, error=error))


def _worker(name: str, sources: list[Source], queue, block_size: int | None = None) -> None:
    """Measure one compressor on every source (runs in a separate process)."""
    from lmzip.bench import compressors

    try:
        comp = compressors.build(name, block_size)
    except Exception as e:  # noqa: BLE001 - reported as a failed row, never a traceback
        for s in sources:
            queue.put(failed(name, s.label, str(e)))
        queue.put(name)
        return
    for s in sources:
        queue.put(("start", name, s.label))
        queue.put(measure(comp, s.label, s.read()))
    queue.put(name)


def environment(command: str) -> dict[str, Any]:
    """Versions, machine and git commit: what a reader needs to reproduce the numbers."""
    def version(pkg: str) -> str | None:
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return None

    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    return {
        "lmzip": __version__, "torch": version("torch"), "constriction": version("constriction"),
        "python": platform.python_version(), "platform": platform.platform(), "cpu": cpu,
        "cores": os.cpu_count(), "threads_per_compressor": 1,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": commit, "command": command,
    }


def run(names: list[str], sources: list[Source], jobs: int = 1,
        on_row: Callable[[dict[str, Any]], None] | None = None,
        on_start: Callable[[str, str], None] | None = None, block_size: int | None = None) -> list[dict[str, Any]]:
    """Every compressor on every source, ``jobs`` compressors at a time; rows in registry order.
    ``on_start(compressor, file)`` is called as a measurement begins, ``on_row(row)`` as it ends;
    ``block_size``: lmzip's compressors code in blocks of that many bytes."""
    import queue as queue_mod

    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    pending, running, rows = list(names), {}, []
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    while pending or running:
        while pending and len(running) < jobs:
            name = pending.pop(0)
            running[name] = ctx.Process(target=_worker, args=(name, sources, q, block_size))
            running[name].start()
        try:
            msg = q.get(timeout=2)
        except queue_mod.Empty:
            for name, p in list(running.items()):
                if p.exitcode is not None:  # died without saying it was done (a crash)
                    seen = {r["file"] for r in rows if r["compressor"] == name}
                    for s in sources:
                        if s.label not in seen:
                            rows.append(failed(name, s.label, f"worker died ({p.exitcode})"))
                            if on_row:
                                on_row(rows[-1])
                    del running[name]
            continue
        if isinstance(msg, str):  # the worker's "done"
            running.pop(msg).join()
            continue
        if isinstance(msg, tuple):  # ("start", compressor, file)
            if on_start:
                on_start(msg[1], msg[2])
            continue
        rows.append(msg)
        if on_row:
            on_row(msg)
    return in_order(rows, names)


def in_order(rows: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """Rows by compressor in the order asked for, then by file."""
    order = {n: i for i, n in enumerate(names)}
    return sorted(rows, key=lambda r: (order.get(r["compressor"], len(order)), r["file"]))


def temp_workdir() -> Path:
    """A scratch folder for dataset sources."""
    return Path(tempfile.mkdtemp(prefix="lmzip-bench-"))
