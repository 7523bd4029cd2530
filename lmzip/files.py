"""File handling with the gzip/xz/zstd conventions: output names, atomic writes, never lose a byte."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from lmzip.errors import LmzipError

SUFFIX = ".lmz"


class Skip(LmzipError):
    """A file passed over with a warning (exit status 2), not an error."""


def read_input(src: Path, force: bool = False) -> bytes:
    """The raw bytes of an input file, or a one-line error; FIFOs and devices only with ``force``
    (as gzip: reading one may block forever or never end)."""
    if src.is_dir():
        raise Skip(f"{src}: is a directory -- ignored")
    if src.exists() and not src.is_file() and not force:
        raise Skip(f"{src}: not a regular file -- ignored (use -f to read it)")
    try:
        return src.read_bytes()
    except OSError as e:
        raise LmzipError(f"{src}: {e.strerror or e}") from e


def check_suffix(suffix: str) -> None:
    """A suffix that can name a file: not empty, no path separator."""
    if not suffix or "/" in suffix or suffix in (".", ".."):
        raise LmzipError(f"invalid suffix {suffix!r}: it must be a non-empty file name ending")


def compressed_name(src: Path, suffix: str = SUFFIX) -> Path:
    """file.txt -> file.txt.lmz; refuses a file that already has the suffix."""
    if src.name.endswith(suffix):
        raise Skip(f"{src}: already has {suffix} suffix -- unchanged")
    return src.with_name(src.name + suffix)


def decompressed_name(src: Path, suffix: str = SUFFIX) -> Path:
    """file.txt.lmz -> file.txt; refuses a file without the suffix."""
    if not src.name.endswith(suffix) or src.name == suffix:
        raise Skip(f"{src}: unknown suffix -- ignored (expected {suffix})")
    return src.with_name(src.name[: -len(suffix)])


def write_atomic(dst: Path, data: bytes, force: bool, like: Path | None = None) -> None:
    """Write ``data`` to a temporary beside ``dst`` and rename it into place only when complete.

    Nothing is left behind on any failure or interrupt, and an existing file is replaced only
    with ``force``. ``like`` copies the permission bits of the input (as gzip does)."""
    if dst.exists() and not force:
        raise LmzipError(f"{dst}: already exists; use -f to overwrite")
    if dst.is_dir():
        raise LmzipError(f"{dst}: is a directory")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=dst.parent or ".", prefix=f".{dst.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if like is not None:
            shutil.copymode(like, tmp)
        os.replace(tmp, dst)
        tmp = None
    except OSError as e:
        raise LmzipError(f"{dst}: {e.strerror or e}") from e
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def remove_input(src: Path) -> None:
    """Delete an input after its output was written and verified (``--rm``)."""
    try:
        src.unlink()
    except OSError as e:
        raise LmzipError(f"{src}: cannot remove ({e.strerror or e})") from e
