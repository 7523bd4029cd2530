"""Keep numba's on-disk cache honest for this wing.

numba's cache (cache=True) checks only the source file of the function it caches. The coding loop in
`model` inlines pieces from `parts`, `coder` and `tables`; edit one of those alone and a stale
compiled loop would be loaded — an encoder and a decoder with different arithmetic. So a digest of
all the wing's compiled sources is kept beside the cache, and a mismatch clears the wing's cache
before anything compiled is loaded (model imports this first).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = ("tables.py", "coder.py", "parts.py", "body.py", "model.py", "mix.py")


def sources_digest(folder: Path = HERE) -> str:
    """sha256 over the wing's compiled sources, in a fixed order."""
    h = hashlib.sha256()
    for name in SOURCES:
        h.update((folder / name).read_bytes())
    return h.hexdigest()


def ensure_fresh(folder: Path = HERE) -> None:
    """Drop the folder's cached machine code if any compiled source changed since it was written."""
    cache = folder / "__pycache__"
    stamp = cache / "cm-sources.sha256"
    digest = sources_digest(folder)
    try:
        if stamp.exists() and stamp.read_text() == digest:
            return
        for f in cache.glob("*.nb[ic]"):
            f.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba then does not cache here either
        pass


ensure_fresh()
