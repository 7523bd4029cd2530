"""Where numba keeps compiled code: beside the sources, or else a folder this user can write.

numba caches (cache=True) in the package's ``__pycache__`` folders, else under the user's cache folder,
and where it can write neither (a read-only install run by a user with no writable home) it refuses to
compile at all ("no locator available"). So, before numba loads, a writable place is found: the
package's own folders where writable (lmzip.cm.jitcache keeps those fresh), else a folder under the
user's cache or the temp folder named by a digest of every compiled source, so code compiled from other
sources is never loaded. What the package's own folders already hold (compiled there by whoever installed it) is
copied into that folder first (`seed`), so each user of a read-only install does not compile the loops again (~1 min
each); numba still checks each file against its source, and lmzip.cm.jitcache the wing's digest.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent
COMPILED = ("arith/kernels.py", "cm/tables.py", "cm/coder.py", "cm/parts.py", "cm/body.py", "cm/model.py",
            "cm/mix.py")


def writable(folder: Path) -> bool:
    """Whether a file can be made in ``folder`` (made first where missing), as numba checks it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _private(base: Path, uid: int) -> bool:
    """Whether ``base`` is (or was just made as) a folder of this user's that no one else can write: compiled
    code is loaded from it, so a folder another user made in a shared temp folder is never used."""
    try:
        base.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = base.lstat()
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o022


def digest() -> str:
    """sha256 over every compiled source (a short prefix names the cache folder)."""
    h = hashlib.sha256()
    for name in COMPILED:
        h.update((PKG / name).read_bytes())
    return h.hexdigest()[:16]


def ensure_cache_dir() -> str | None:
    """Point numba at a writable cache where the package's folders are not; returns that folder (None:
    the package's own, or one the user chose with NUMBA_CACHE_DIR)."""
    if os.environ.get("NUMBA_CACHE_DIR") or all(writable(PKG / w / "__pycache__") for w in ("arith", "cm")):
        return None
    tag = f"numba-{digest()}"
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    uid = os.getuid() if hasattr(os, "getuid") else 0
    for base in (Path(home) / "lmzip", Path(tempfile.gettempdir()) / f"lmzip-{uid}"):
        if _private(base, uid) and writable(base / tag):
            os.environ["NUMBA_CACHE_DIR"] = str(base / tag)
            import sys

            if "numba" in sys.modules:  # already loaded by the caller: its config was read already
                sys.modules["numba"].config.CACHE_DIR = str(base / tag)
            seed(base / tag)
            return str(base / tag)
    return None


def seed(cache: Path) -> int:
    """Copy the compiled code the package's own folders hold into ``cache`` (into the folder numba keeps there for
    each source folder) where it is missing or older; returns how many files were copied (none without numba)."""
    try:
        from numba.core.caching import UserWideCacheLocator as locator
    except ImportError:  # no numba, or another numba's layout: numba compiles here
        return 0
    copied = 0
    for wing in ("arith", "cm"):
        there = cache / locator.get_suitable_cache_subpath(str(PKG / wing / "__init__.py"))
        try:
            files = [f for f in (PKG / wing / "__pycache__").iterdir() if f.suffix in (".nbi", ".nbc", ".sha256")]
        except OSError:  # none there, or unreadable: numba compiles here
            continue
        for f in files:
            try:
                if not (there / f.name).exists() or (there / f.name).stat().st_mtime < f.stat().st_mtime:
                    there.mkdir(parents=True, exist_ok=True)
                    part = there / f".{f.name}.{os.getpid()}"  # whole or not at all: another run may be loading it
                    shutil.copy2(f, part)
                    os.replace(part, there / f.name)
                    copied += 1
            except OSError:  # unreadable there, or no room here: numba compiles what is missing
                continue
    return copied
