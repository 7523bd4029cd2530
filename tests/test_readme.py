"""The README's results section is the one generated from the committed JSON."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_readme_results_match_committed_json():
    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "benchmarks" / "update_readme.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not (mod.RESULTS / "results.json").exists():
        pytest.fail("benchmarks/results/default/results.json is missing: run `make bench`")
    readme = (ROOT / "README.md").read_text()
    assert mod.updated(readme) == readme, "README is stale: run python benchmarks/update_readme.py"


def test_readme_gives_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "make bench" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()
