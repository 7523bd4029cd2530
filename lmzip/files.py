"""File handling with the gzip/xz/zstd conventions: output names, atomic writes, never lose a byte."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from lmzip.errors import LmzipError

SUFFIX = ".lmz"


class Skip(LmzipError):
    """A file passed over with a warning (exit status 2), not an error."""


def open_input(src: Path, force: bool = False) -> BinaryIO:
    """An input file opened for reading (block by block), or a one-line error; FIFOs and devices only
    with ``force`` (as gzip: reading one may block forever or never end)."""
    try:
        if src.is_dir():
            raise Skip(f"{src}: is a directory -- ignored")
        if src.exists() and not src.is_file() and not force:
            raise Skip(f"{src}: not a regular file -- ignored (use -f to read it)")
        return open(src, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as e:
        raise LmzipError(f"{src}: {e.strerror or e}") from e


def size_of(f: BinaryIO) -> int | None:
    """The size of a regular file behind ``f`` (None for pipes and terminals): for progress only."""
    try:
        st = os.fstat(f.fileno())
    except (OSError, ValueError, AttributeError):
        return None
    import stat

    return st.st_size if stat.S_ISREG(st.st_mode) else None


@contextlib.contextmanager
def atomic_output(dst: Path, force: bool, like: Path | None = None) -> Iterator[BinaryIO]:
    """A file to write (and read back) that appears as ``dst`` only when the block completes; on any
    failure, interrupt or kill nothing is left behind, and an existing file is replaced only with
    ``force``: without it the last step is an exclusive create, so a file that appeared under ``dst``
    while this one was written (another writer) is never replaced. ``like`` copies the permission bits
    of the input (as gzip does).

    On Linux the file is unnamed (O_TMPFILE) until it is complete, so even SIGKILL leaves nothing;
    elsewhere it is a named temporary beside ``dst``, removed on any failure that can be caught."""
    if dst.exists() and not force:
        raise LmzipError(f"{dst}: already exists; use -f to overwrite")
    if dst.is_dir():
        raise LmzipError(f"{dst}: is a directory")
    folder = str(dst.parent or ".")
    tmp = None
    try:
        fd = _unnamed(folder)
        if fd is None:
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{dst.name}.", suffix=".tmp")
        with os.fdopen(fd, "w+b") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
            if like is not None:
                os.chmod(f.fileno(), os.stat(like).st_mode & 0o7777)
            if tmp is None and not force and _link_new(f.fileno(), dst):
                return  # the unnamed file now has its name, which nothing else had
            if tmp is None:  # give the unnamed file a temporary name, then move it into place
                tmp = tempfile.mktemp(dir=folder, prefix=f".{dst.name}.", suffix=".tmp")
                _link(f.fileno(), tmp)
        _place(tmp, dst, force)
        tmp = None
    except FileExistsError as e:
        raise LmzipError(f"{dst}: already exists; use -f to overwrite") from e
    except OSError as e:
        raise LmzipError(f"{dst}: {e.strerror or e}") from e
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def _link_new(fd: int, dst: Path) -> bool:
    """Name the unnamed file ``fd`` ``dst`` where no file has that name (FileExistsError where one has);
    False where the file system cannot link (the caller then renames)."""
    try:
        _link(fd, str(dst))
    except FileExistsError:
        raise
    except OSError as e:
        if e.errno in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK, errno.ENOENT):
            return False
        raise
    return True


def _place(tmp: str, dst: Path, force: bool) -> None:
    """Move the complete file ``tmp`` to ``dst``: replacing what is there only with ``force``; without it a
    hard link, which fails where ``dst`` exists (a rename after a last look where links are not possible)."""
    if force:
        os.replace(tmp, dst)
        return
    try:
        os.link(tmp, dst)
    except FileExistsError:
        raise
    except OSError:  # a file system without hard links: the narrowest window there is
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, "File exists", str(dst)) from None
        os.replace(tmp, dst)
        return
    os.unlink(tmp)


def _unnamed(folder: str) -> int | None:
    """An unnamed file in ``folder`` (Linux O_TMPFILE), or None where the system or file system has none."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.exists("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_RDWR, 0o666 & ~_umask())
    except OSError:
        return None


def _link(fd: int, path: str) -> None:
    """Give the unnamed file ``fd`` the name ``path`` (linkat with AT_SYMLINK_FOLLOW through /proc: a
    dir_fd makes Python call linkat, where a plain os.link calls link and fails across /proc)."""
    root = os.open("/", os.O_RDONLY)
    try:
        os.link(f"/proc/self/fd/{fd}", path, src_dir_fd=root, follow_symlinks=True)
    finally:
        os.close(root)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


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
    """Write ``data`` to ``dst`` through ``atomic_output``: all of it, or nothing."""
    with atomic_output(dst, force, like) as f:
        f.write(data)


class Discard:
    """A sink that keeps nothing (``lmzip test`` decodes and checks, and writes nothing)."""

    def write(self, data: bytes) -> int:
        return len(data)


class SameAs:
    """A sink that compares what is written with ``original``, piece by piece (``--rm``'s check)."""

    def __init__(self, original: BinaryIO):
        self.original, self.same = original, True

    def write(self, data: bytes) -> int:
        self.same = self.same and self.original.read(len(data)) == data
        return len(data)

    def complete(self) -> bool:
        """Everything matched and the original has nothing more."""
        return self.same and not self.original.read(1)


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (device and inode, as zstd compares them; False where one is missing)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def remove_input(src: Path, output: Path | None = None) -> None:
    """Delete an input after its output was written and verified (``--rm``); never the output itself."""
    if output is not None and same_file(src, output):
        raise LmzipError(f"{src}: not removed: it is the output")
    try:
        src.unlink()
    except OSError as e:
        raise LmzipError(f"{src}: cannot remove ({e.strerror or e})") from e
