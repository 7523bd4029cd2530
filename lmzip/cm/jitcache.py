"""Keep numba's on-disk cache honest for this wing, and say how its coding loops compile (`UNCOUNTED`).

numba's cache (cache=True) checks only the source file of the function it caches. The coding loop in
`model` inlines pieces from every sibling module (`parts`, `mixers`, `text`, ...); edit one alone and a stale
compiled loop would be loaded — an encoder and a decoder with different arithmetic. So a digest of
all the wing's compiled sources is kept beside the cache, and a mismatch clears the wing's cache
before anything compiled is loaded (model imports this first).

numba inlines each ``inline="always"`` helper by deep-copying the helper's IR block by block, each block with a memo
of its own, so the helper's whole scope (every variable) is copied once a block: most of a loop's compile went there.
`share_the_inliners_memo` gives each inlining one memo (one copy of the scope, as the helper itself has one); the IR
and the machine code are the same (counting's loop compiled in 61 s against 88, the same bytes).
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The coding loops, and the helpers they call without inlining, compile without numba's reference counts
# (``_nrt=False``): they allocate nothing (every array comes from Python), and counting each array a helper is handed
# (an argument, a tuple's member) took over half of counting's time (alice29.txt at level 1: 136 -> 345 KB/s).
UNCOUNTED = {"cache": True, "_nrt": False}


def sources(folder: Path = HERE) -> list[Path]:
    """Every source of the wing, in a fixed order: any of them may be compiled into the loop."""
    return sorted(folder.glob("*.py"), key=lambda p: p.name)


def sources_digest(folder: Path = HERE) -> str:
    """sha256 over the wing's compiled sources, in a fixed order."""
    h = hashlib.sha256()
    for path in sources(folder):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def _numba_dirs(folder: Path) -> tuple[list[Path], list[Path]]:
    """Where numba keeps the wing's machine code: the folders it writes into (beside the sources, and the one named
    after the sources' folder in NUMBA_CACHE_DIR where that is set, as lmzip.arith.jitdir may set it), and the one in
    the user's cache it writes into where the sources' folder is read-only."""
    written, other = [folder / "__pycache__"], []
    try:
        from numba.core import caching, config
        from numba.misc.appdirs import AppDirs

        sub = caching.UserWideCacheLocator.get_suitable_cache_subpath(str(folder / "model.py"))
        if config.CACHE_DIR:
            written.append(Path(config.CACHE_DIR) / sub)
        other.append(Path(AppDirs(appname="numba", appauthor=False).user_cache_dir) / sub)
    except (ImportError, AttributeError):  # another numba's layout: the folder beside the sources alone
        pass
    return written, other


def cache_dirs(folder: Path = HERE) -> list[Path]:
    """Every folder numba may keep the wing's machine code in: beside the sources, and the one named after the
    sources' folder in NUMBA_CACHE_DIR or (where the sources' is read-only) in the user's cache."""
    written, other = _numba_dirs(folder)
    return written + other


def ensure_fresh(folder: Path = HERE) -> None:
    """Drop the folder's cached machine code, wherever numba keeps it, if any compiled source changed since it was
    written."""
    digest = sources_digest(folder)
    written, other = _numba_dirs(folder)
    for cache in written + other:
        stamp = cache / "cm-sources.sha256"
        try:
            if stamp.exists() and stamp.read_text() == digest:
                continue
            for f in cache.glob("*.nb[ic]"):
                f.unlink(missing_ok=True)
            # a folder numba writes into is made now and stamped, so the code the first run compiles there is kept
            # (unstamped, the second run cleared it and compiled again: ~50 s a loop)
            if cache.exists() or cache in written:
                cache.mkdir(parents=True, exist_ok=True)
                stamp.write_text(digest)
        except OSError:  # a read-only folder: numba does not cache there either
            pass


class _OneMemo:
    """The ``copy`` module as numba's inliner sees it: within one inlining, every deepcopy shares one memo."""

    memo: dict | None = None

    def deepcopy(self, x, memo=None):
        """copy.deepcopy, with the inlining's memo where the caller gave none."""
        return copy.deepcopy(x, self.memo if memo is None and self.memo is not None else memo)

    def __getattr__(self, name: str):
        return getattr(copy, name)


# numba releases whose inliner copies the helper's IR twice at an inlining's start and deep-copies nothing after
# (read in 0.68's numba/core/inline_closurecall.py, InlineWorker.inline_ir); another release is left as it is
INLINER_READ = ((0, 59), (0, 70))


def inliner_read() -> bool:
    """Whether this numba's release is one whose inliner was read (`INLINER_READ`)."""
    try:
        import numba
    except ImportError:
        return False
    release = tuple(int(x) for x in numba.__version__.split(".")[:2] if x.isdigit())
    return INLINER_READ[0] <= release < INLINER_READ[1]


def share_the_inliners_memo() -> bool:
    """Make numba's inliner copy a helper's IR with one memo an inlining; False where this numba's inliner is not
    the one it was written for (nothing is changed then)."""
    if not inliner_read():
        return False
    from numba.core import inline_closurecall as inliner

    worker = getattr(inliner, "InlineWorker", None)
    if isinstance(getattr(inliner, "copy", None), _OneMemo):
        return True
    if getattr(inliner, "copy", None) is not copy or not callable(getattr(worker, "inline_ir", None)):
        return False
    shared, plain = _OneMemo(), worker.inline_ir

    def inline_ir(self, *args, **kwargs):
        saved, shared.memo = shared.memo, {}
        try:
            return plain(self, *args, **kwargs)
        finally:
            shared.memo = saved

    inliner.copy, worker.inline_ir = shared, inline_ir
    return True


ensure_fresh()
share_the_inliners_memo()
