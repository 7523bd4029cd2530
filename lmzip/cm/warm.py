"""A first run's two loops compiled side by side: where numba holds no code of counting's loop nor of the mixed loop
for this CPU (a fresh install, a new release), a child process compiles the mixed loop while this one compiles
counting's (the mixed coder counts a block first), so the default's first run waits about a minute less where a
second core is free (lmzip.cm.mix.compile_beside). numba writes each cache file whole; the mixed coder waits for the
child before its first token (`join`), then loads what the child wrote. Nothing changes in what either loop writes.

The child imports the very lmzip this process runs (its folder first, then this process's path; not the current
folder), ends itself when this process is gone, and is ended where this process exits without needing it. Helpers the
two loops share compile in both at once with the same signatures (each writes the same entry; the test suite's
fixture has compiled its three loops so for many sessions).
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

_child: subprocess.Popen | None = None
_lock = threading.Lock()
WAIT_S = 300  # the longest the mixed coder waits for the child (a loop compiles in ~1 minute; then it compiles itself)
ROOM = 4 << 30  # the memory free that a child needs: it holds ~1 GB while the mixed loop compiles (976 MB measured),
# this process ~1.7 GB compiling counting's loop (1.65 GB measured) and counting's tables up to ~1.3 GB (level 7)


def compiled_here(dispatcher) -> bool:
    """Whether numba's cache holds code of ``dispatcher`` (a cache=True function) for this CPU; True where this
    numba's cache cannot be asked (then nothing is started beside)."""
    if getattr(dispatcher, "signatures", None):  # compiled (or loaded) in this process already
        return True
    try:  # numba's own index: {(signature, the CPU's name and features, the source's hashes): file}
        index = dispatcher._cache._cache_file._load_index()
        magic = dispatcher.targetctx.codegen().magic_tuple()
        return any(key[1] == magic for key in index)
    except Exception:  # noqa: BLE001 - another numba's layout: behave as before (each loop compiles when first run)
        return True


def beside(loops: tuple, code: str, room: int | None, cores: int) -> bool:
    """Start a child running ``code`` (Python: it compiles a loop) where none of ``loops`` has code for this CPU, a
    second core is free (``cores``: those this process may run on) and so is ROOM of memory (``room``: the bytes
    free, None where unknown); returns whether one runs (one at most)."""
    global _child
    with _lock:
        if _child is not None and _child.poll() is None:
            return True
        if not sys.executable or getattr(sys, "frozen", False):  # no interpreter to start: each compiles here
            return False
        if cores < 2 or (room is not None and room < ROOM) or any(compiled_here(loop) for loop in loops):
            return False
        # the lmzip this process runs (its folder as this process names it: numba names its cache folders by the
        # sources' paths), then this process's path, never the current folder
        path = [str(Path(__file__).parent.parent.parent)] + [p for p in sys.path if p]
        env = {**os.environ, "LMZIP_WARM": json.dumps({"path": path, "parent": os.getpid()})}
        boot = ("import json, os, sys; w = json.loads(os.environ['LMZIP_WARM']); sys.path[:] = w['path']; "
                "from lmzip.cm import warm; warm.orphan_guard(w['parent']); ")
        try:
            _child = subprocess.Popen([sys.executable, "-I", "-c", boot + code], env=env, stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, ValueError):  # the interpreter would not start: each loop compiles here, as before
            return False
        return True


def join() -> None:
    """Wait for the child compiling the mixed loop, if one runs (what it compiled is then loaded, not compiled
    again; where it failed, the loop compiles here, as without it)."""
    global _child
    child = _child
    if child is None:
        return
    try:  # outside the lock: another thread may ask `beside` meanwhile (it finds this child)
        child.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    with _lock:
        if _child is child:
            _child = None


def stop() -> None:
    """End the child where this process ends before its mixed coder needed it (it would compile for no one)."""
    global _child
    with _lock:
        if _child is not None and _child.poll() is None:
            _child.kill()
            _child.wait()
        _child = None


def orphan_guard(parent: int) -> None:
    """In the child: end it once process ``parent`` is gone (killed, or ended by os._exit: no atexit ran there)."""
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


atexit.register(stop)
