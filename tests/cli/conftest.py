"""Fixtures the command-line tests share."""

from __future__ import annotations

import pytest

from tests.conftest import TEXT


@pytest.fixture()
def work(tmp_path, model_dir, monkeypatch):
    """A folder with a.txt (the current directory) and the tiny-gpt model installed."""
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    (tmp_path / "work" / "a.txt").write_bytes(TEXT)
    return tmp_path / "work"
