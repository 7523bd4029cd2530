"""Corpora: raw bytes of files and folders, local or cached `datasets`, and cached token arrays."""

from __future__ import annotations

import hashlib
import lzma
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from lmzip.errors import LmzipError

SKIP_SUFFIXES = (".tsv", ".md", ".lmz")


def list_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand files and folders (recursively, sorted) into a list of files."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.is_file() and not f.name.startswith("."))
        elif p.is_file():
            out.append(p)
        else:
            raise LmzipError(f"{p}: no such file or folder")
    return out


def read_bytes(path: Path) -> bytes:
    """A file's bytes (an ``.xz`` file's unpacked), with a one-line error when it cannot be read."""
    try:
        data = Path(path).read_bytes()
        return lzma.decompress(data) if str(path).endswith(".xz") else data
    except OSError as e:
        raise LmzipError(f"{path}: {e.strerror or e}") from e
    except lzma.LZMAError as e:
        raise LmzipError(f"{path}: not a valid .xz file ({e})") from e


def _offline(datasets) -> None:
    """Keep the hub offline even when datasets was imported before the variables above were set."""
    import huggingface_hub.constants as hub

    hub.HF_HUB_OFFLINE = True
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        if hasattr(datasets.config, name):
            setattr(datasets.config, name, True)


def load_dataset_texts(name: str, split: str, column: str) -> list[bytes]:
    """UTF-8 bytes of one text column of a local or cached Hugging Face dataset (offline only)."""
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import datasets
    except ImportError as e:  # pragma: no cover - depends on the install
        raise LmzipError("the 'datasets' package is not installed (pip install datasets)") from e
    _offline(datasets)
    try:
        ds = datasets.load_dataset(name, split=split)  # a local folder or a cached hub name
    except Exception as e:  # datasets raises many types; all mean "not available here"
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise LmzipError(f"dataset {name!r} (split {split!r}) is not available offline: {first}") from e
    if column not in ds.column_names:
        raise LmzipError(f"dataset {name!r} has no column {column!r} (columns: {', '.join(ds.column_names)})")
    return [str(t).encode("utf-8") for t in ds[column]]


def sha256_files(files: list[Path]) -> str:
    """One checksum over the listed files' names and contents (the training data's identity)."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode() + b"\0" + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def chunk_doc(data: bytes, size: int = 1 << 20) -> list[bytes]:
    """Cut a document into ~size pieces at newlines (for parallel tokenization)."""
    out, i = [], 0
    while i < len(data):
        j = min(len(data), i + size)
        if j < len(data):
            k = data.rfind(b"\n", i, j)
            j = k + 1 if k > i else j
        out.append(data[i:j])
        i = j
    return out


def tokenize_files(files: list[Path], tok, cache_dir: Path | None) -> np.ndarray:
    """All files' tokens concatenated (uint16/int32), cached on disk by content and tokenizer."""
    key = hashlib.sha256((sha256_files(files) + hashlib.sha256(tok.to_json().encode()).hexdigest()).encode())
    cache = Path(cache_dir) / f"tokens-{key.hexdigest()[:16]}.npy" if cache_dir else None
    if cache is not None and cache.exists():
        return np.load(cache)
    parts = []
    for f in files:
        data = read_bytes(f)
        if hasattr(tok, "encode_batch"):
            parts += tok.encode_batch(chunk_doc(data))
        else:
            parts.append(tok.encode(data))
    dtype = np.uint16 if tok.vocab_size <= 65535 else np.int32
    arr = np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, arr)
    return arr
