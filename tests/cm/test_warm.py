"""A first run's loops compiled side by side (lmzip.cm.warm, lmzip.cm.mix.compile_beside): the child compiles the
very code the mixed coder runs, numba's cache is asked right, and the child is waited for or ended."""

import importlib
import subprocess
import sys
import time
from pathlib import Path

import pytest

import lmzip
from lmzip.cm import mix, model, warm
from lmzip.coding import codec
from lmzip.coding.settings import Settings
from tests.conftest import TEXT


def test_the_childs_warm_up_is_the_mixed_coders_own_loop(gpt_model):
    # the mixed coder here, then the warm-up: one compiled signature (with other argument types the child would
    # compile code no one runs)
    codec.encode(TEXT[:300], gpt_model, Settings(mix=True, segment=64), workers=1)
    mix.warm_up()
    assert len(mix._step.signatures) == 1, mix._step.signatures


def test_the_child_runs_this_lmzip_not_the_current_folders(tmp_path, monkeypatch):
    (tmp_path / "lmzip").mkdir()
    (tmp_path / "lmzip" / "__init__.py").write_text("raise SystemExit(3)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(warm, "compiled_here", lambda d: False)
    out = tmp_path / "seen"
    assert warm.beside((mix._step,), f"import lmzip; open({str(out)!r}, 'w').write(lmzip.__file__)", None, 2)
    child = warm._child
    warm.join()
    assert child.returncode == 0 and out.read_text() == lmzip.__file__


def test_the_child_ends_itself_when_lmzip_is_gone():
    root = str(Path(lmzip.__file__).parent.parent)
    t0 = time.monotonic()
    code = "from lmzip.cm import warm; warm.orphan_guard(-1); import time; time.sleep(60)"  # -1: not its parent
    done = subprocess.run([sys.executable, "-c", code], cwd=root, timeout=60)
    assert done.returncode == 1 and time.monotonic() - t0 < 30


def test_compiled_here_reads_numbas_cache(tmp_path, monkeypatch):
    (tmp_path / "fresh_loop.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef twice(x):\n"
                                            "    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    fresh = importlib.import_module("fresh_loop")
    try:
        assert not warm.compiled_here(fresh.twice)  # never run: nothing cached
        assert fresh.twice(21) == 42
        assert warm.compiled_here(fresh.twice)  # compiled in this process
        again = importlib.reload(fresh)
        assert warm.compiled_here(again.twice)  # and in its __pycache__, for this CPU
    finally:
        sys.modules.pop("fresh_loop", None)
    assert warm.compiled_here(mix._step) and warm.compiled_here(model._code)  # the session's fixture ran both
    assert warm.compiled_here(object())  # not numba's: asked nothing, started nothing


def test_beside_starts_a_child_and_the_mixed_coder_waits_for_it(monkeypatch):
    monkeypatch.setattr(warm, "compiled_here", lambda d: False)
    assert mix.compile_beside(None, 2)
    child = warm._child
    assert child is not None and mix.compile_beside(None, 2)  # one child, however often asked
    mix.warm_up()  # the mixed coder's first token waits for the child
    assert warm._child is None and child.returncode == 0


def test_no_child_on_one_core_short_of_memory_or_where_a_loop_is_compiled(monkeypatch):
    monkeypatch.setattr(warm, "compiled_here", lambda d: False)
    assert not mix.compile_beside(None, 1) and warm._child is None  # one core
    assert not mix.compile_beside(warm.ROOM - 1, 2) and warm._child is None  # too little memory free
    monkeypatch.setattr(warm, "compiled_here", lambda d: d is model._code)
    assert not mix.compile_beside(None, 2) and warm._child is None


def test_stop_ends_a_child_no_one_waited_for(monkeypatch):
    monkeypatch.setattr(warm, "compiled_here", lambda d: False)
    assert warm.beside((mix._step,), "import time; time.sleep(60)", warm.ROOM, 2)
    child = warm._child
    warm.stop()
    assert warm._child is None and child.returncode is not None
    warm.join()  # nothing to wait for


@pytest.fixture(autouse=True)
def _no_child_left():
    yield
    warm.stop()
