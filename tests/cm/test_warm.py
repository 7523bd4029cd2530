"""A first run's loops compiled side by side (lmzip.cm.warm, lmzip.cm.mix.compile_beside): the child compiles the
very code the mixed coder runs, numba's cache is asked right, and the child is waited for or ended."""

import importlib
import sys

import pytest
from numba.core import event

from lmzip.cm import mix, model, warm


def test_the_childs_warm_up_is_the_mixed_coders_own_loop():
    # the session's fixture ran the mixed coder (tests/conftest.py): its code is in numba's cache; the warm-up, run
    # with other argument types, would compile another (the child would compile for no one)
    with event.install_recorder("numba:compile") as rec:
        mix.warm_up()
    compiled = {ev.data["dispatcher"].py_func.__qualname__ for _, ev in rec.buffer if ev.is_start}
    assert "_step" not in compiled and "_byte" not in compiled


def test_compiled_here_reads_numbas_cache(tmp_path, monkeypatch):
    (tmp_path / "fresh_loop.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef twice(x):\n"
                                            "    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    fresh = importlib.import_module("fresh_loop")
    try:
        assert not warm.compiled_here(fresh.twice)  # never run: nothing cached
        assert fresh.twice(21) == 42
        assert warm.compiled_here(fresh.twice)  # now in its __pycache__, for this CPU
    finally:
        sys.modules.pop("fresh_loop", None)
    assert warm.compiled_here(mix._step) and warm.compiled_here(model._code)  # the session's fixture ran both
    assert warm.compiled_here(object())  # not numba's: asked nothing, started nothing


def test_beside_starts_a_child_and_the_mixed_coder_waits_for_it(monkeypatch):
    monkeypatch.setattr(warm, "compiled_here", lambda d: False)
    monkeypatch.setattr(warm, "cores", lambda: 2)
    assert mix.compile_beside(None)
    child = warm._child
    assert child is not None and mix.compile_beside(None)  # one child, however often asked
    mix.warm_up()  # the mixed coder's first token waits for the child
    assert warm._child is None and child.returncode == 0


def test_no_child_on_one_core_short_of_memory_or_where_a_loop_is_compiled(monkeypatch):
    monkeypatch.setattr(warm, "cores", lambda: 1)
    monkeypatch.setattr(warm, "compiled_here", lambda d: False)
    assert not mix.compile_beside(None) and warm._child is None
    monkeypatch.setattr(warm, "cores", lambda: 2)
    assert not mix.compile_beside(warm.ROOM - 1) and warm._child is None  # too little memory free
    monkeypatch.setattr(warm, "compiled_here", lambda d: d is model._code)
    assert not mix.compile_beside(None) and warm._child is None


def test_stop_ends_a_child_no_one_waited_for(monkeypatch):
    monkeypatch.setattr(warm, "compiled_here", lambda d: False)
    monkeypatch.setattr(warm, "cores", lambda: 2)
    assert warm.beside((mix._step,), "import time; time.sleep(60)", warm.ROOM)
    child = warm._child
    warm.stop()
    assert warm._child is None and child.returncode is not None
    warm.join()  # nothing to wait for


@pytest.fixture(autouse=True)
def _no_child_left():
    yield
    warm.stop()
