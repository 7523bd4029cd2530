"""A first run's two loops compiled side by side: where numba holds no code of counting's loop nor of the mixed loop
for this CPU (a fresh install, a new release), a child process compiles the mixed loop while this one compiles
counting's (the mixed coder counts a block first), so the default's first run waits about a minute less where a
second core is free (lmzip.cm.mix.compile_beside). numba writes each cache file whole; the mixed coder waits for the
child before its first token (`join`), then loads what the child wrote. Nothing changes in what either loop writes.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import threading
from pathlib import Path

_child: subprocess.Popen | None = None
_lock = threading.Lock()
WAIT_S = 900  # the longest the mixed coder waits for the child (a loop compiles in ~1 minute; then it compiles itself)
ROOM = 2 << 30  # the memory free that a child needs: it holds ~1 GB while the mixed loop compiles (976 MB measured),
# and as much again is left to this process, which compiles counting's loop meanwhile


def compiled_here(dispatcher) -> bool:
    """Whether numba's cache holds code of ``dispatcher`` (a cache=True function) for this CPU; True where this
    numba's cache cannot be asked (then nothing is started beside)."""
    try:  # numba's own index: {(signature, the CPU's name and features, the source's hashes): file}
        index = dispatcher._cache._cache_file._load_index()
        magic = dispatcher.targetctx.codegen().magic_tuple()
        return any(key[1] == magic for key in index)
    except Exception:  # noqa: BLE001 - another numba's layout: behave as before (each loop compiles when first run)
        return True


def cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def beside(loops: tuple, code: str, room: int | None) -> bool:
    """Start a child running ``code`` (Python: it compiles a loop) where none of ``loops`` has code for this CPU, a
    second core is free and so is ROOM of memory (``room``: the bytes free, None where unknown); returns whether one
    runs (one at most)."""
    global _child
    with _lock:
        if _child is not None:
            return True
        if cores() < 2 or (room is not None and room < ROOM) or any(compiled_here(loop) for loop in loops):
            return False
        root = str(Path(__file__).resolve().parent.parent.parent)  # the lmzip this process runs, first on the path
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
        try:
            _child = subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:  # no interpreter to start (an embedded Python): each loop compiles here, as before
            return False
        atexit.register(stop)
        return True


def join() -> None:
    """Wait for the child compiling the mixed loop, if one runs (what it compiled is then loaded, not compiled
    again; where it failed, the loop compiles here, as without it)."""
    global _child
    if _child is None:
        return
    with _lock:
        if _child is not None:
            try:
                _child.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                _child.kill()
                _child.wait()
            _child = None


def stop() -> None:
    """End the child where this process ends before its mixed coder needed it (it would compile for no one)."""
    global _child
    with _lock:
        if _child is not None and _child.poll() is None:
            _child.kill()
            _child.wait()
        _child = None
