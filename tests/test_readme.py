"""The README and the lab notebook carry the sections generated from the committed JSON; the README stays short."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_readme_results_match_committed_json():
    """benchmarks/update_readme.py --check (run as a command, writing nothing) finds every page fresh."""
    if not (ROOT / "benchmarks" / "results" / "default" / "results.json").exists():
        pytest.fail("benchmarks/results/default/results.json is missing: run `make bench`")
    r = subprocess.run([sys.executable, "benchmarks/update_readme.py", "--check"], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr.strip()
    assert "<!-- results:start -->" in (ROOT / "README.md").read_text()
    assert "<!-- learning:start -->" in (ROOT / "benchmarks" / "README.md").read_text()


def test_readme_is_short_and_links_resolve():
    """The README is for users (at most ~150 lines); every relative link of the three pages exists."""
    import re

    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    for page in (ROOT / "README.md", ROOT / "benchmarks" / "README.md", ROOT / "docs" / "usage.md",
                 ROOT / "docs" / "design.md"):
        for target in re.findall(r"\]\(([^)#:]+)\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.name} links to a missing {target}"


def test_readme_gives_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    assert "make bench" in readme and "make test" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_the_version_is_written_once():
    """pyproject.toml holds it; lmzip reads the installed metadata (`make test` reinstalls on a change)."""
    import re

    import lmzip

    written = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert lmzip.__version__ == written
    assert f'"{written}"' not in (ROOT / "lmzip" / "__init__.py").read_text()
