"""Fixtures the command-line tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TEXT


@pytest.fixture()
def work(tmp_path, model_dir, monkeypatch):
    """A folder with a.txt (the current directory) and the tiny-gpt model installed."""
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    (tmp_path / "work" / "a.txt").write_bytes(TEXT)
    return tmp_path / "work"


@pytest.fixture()
def model_frames(monkeypatch):
    """Mix keeps the model's frame even where counting alone would be smaller (tests of what a level or
    a flag hands the codec; tests/coding/test_mix.py tests the choice itself)."""
    from lmzip.coding import codec, stream

    monkeypatch.setattr(stream, "counted_instead", lambda *a, **k: None)
    monkeypatch.setattr(codec, "too_short", lambda *a: False)


def writing(pid: int, folder: Path) -> bool:
    """Whether the process holds its unfinished output open in ``folder`` (an unnamed O_TMPFILE, or a named
    temporary); only there: a library's own temporary (numba writing its cache on a first run, still at
    start-up) is not the output."""
    try:
        return any(t.startswith(f"{folder.resolve()}/") and (".tmp" in t or t.endswith("(deleted)"))
                   for t in (str(p.readlink()) for p in Path(f"/proc/{pid}/fd").iterdir()))
    except OSError:
        return False
