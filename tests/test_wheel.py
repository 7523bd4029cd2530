"""The built wheel, installed into a fresh virtual environment outside the repository, works there:
`lmzip bench` on the bundled corpora, `lmzip -d` on a file it compressed, and `tar -I lmzip`.

Nothing is downloaded: the wheel is built with --no-build-isolation from a copy of the sources, and the
fresh environment borrows this one's dependencies through a .pth file, so pip installs lmzip alone.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow
# two small files of the bundled corpora (1 byte and 3.7 KB): decoding with a model goes token by token
BENCH_FILES = {"a.txt": "canterbury_artificial/a.txt", "grammar.lsp": "canterbury/grammar.lsp"}


def run(cmd: list[str], cwd: Path, env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    """Run a command; on failure the assertion shows its output."""
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, **kw)
    assert p.returncode == 0, f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Iterator[Path]:
    """The wheel, built offline from a clean copy of what it is made of (no build/ leftovers)."""
    if importlib.util.find_spec("setuptools") is None:
        pytest.fail("building the wheel needs setuptools>=70.1 here (pip install -e '.[test]')")
    src = tmp_path_factory.mktemp("src")
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("lmzip", "corpora"):
        shutil.copytree(ROOT / name, src / name, ignore=junk)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    dist = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-w", str(dist), str(src)], src, env)
    shutil.rmtree(src)
    (whl,) = dist.glob("lmzip-*.whl")
    yield whl
    shutil.rmtree(dist)  # ~56 MB; pytest keeps its last three temporary folders


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Iterator[tuple[dict[str, str], Path]]:
    """(environment, an empty working folder): a fresh venv with the wheel installed and on PATH first."""
    venv = tmp_path_factory.mktemp("venv")
    run([sys.executable, "-m", "venv", "--without-pip", "--clear", str(venv)], venv, dict(os.environ))
    py = venv / "bin" / "python"
    site = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "lmzip-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # torch, numpy, pip, …
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LMZIP_MODELS", "VIRTUAL_ENV")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile", "--ignore-installed",
         "--disable-pip-version-check", str(wheel)], venv, env)
    where = run([str(py), "-c", "import lmzip; print(lmzip.__file__)"], venv, env).stdout.strip()
    assert Path(where).is_relative_to(venv), f"the fresh venv imports lmzip from {where}, not its install"
    work = tmp_path_factory.mktemp("work")
    yield env, work
    shutil.rmtree(venv)


def test_the_wheel_carries_the_corpora_and_the_models(wheel, record_property, capsys):
    size = wheel.stat().st_size
    record_property("wheel_bytes", size)
    with capsys.disabled():
        print(f"\n{wheel.name}: {size / 1e6:.1f} MB")
    assert 30e6 < size < 150e6, f"the wheel is {size:,} bytes"
    names = set(zipfile.ZipFile(wheel).namelist())
    corpora = [p.relative_to(ROOT / "corpora").as_posix() for p in (ROOT / "corpora").rglob("*") if p.is_file()]
    missing = [c for c in corpora if f"lmzip/corpora/{c}" not in names]
    assert "MANIFEST.tsv" in corpora and "canterbury/alice29.txt" in corpora and not missing, missing
    assert "lmzip/bench/published.py" in names and "lmzip/weights/gpt-wide/model.safetensors" in names
    assert "lmzip/weights/primers/text.txt.xz" in names  # counting's primers (lmzip.cm.primers)


def test_the_installed_lmzip_benches_decompresses_and_serves_tar(installed):
    """Three independent runs side by side: each is mostly starting Python and coding with a model."""
    env, work = installed
    with ThreadPoolExecutor(3) as pool:
        jobs = [pool.submit(check, env, work / check.__name__) for check in (bench, file_round_trip, tar_round_trip)]
        for job in jobs:
            job.result()


TEXT = "It was the best of times, ünïcode.\n".encode()  # short: decoding steps token by token


def bench(env: dict[str, str], work: Path) -> None:
    """`lmzip bench` on two bundled files: exit 0, every row verified, results in ./lmzip-bench/."""
    work.mkdir()
    p = run(["lmzip", "bench", "--files", ",".join(BENCH_FILES), "--compressors", "gzip,gpt-wide", "--no-plots"],
            work, env)
    doc = json.loads((work / "lmzip-bench" / "results.json").read_text())
    rows = [(r["compressor"], r["file"], r["verified"]) for r in doc["rows"]]
    assert rows == [(c, f, True) for c in ("gzip", "gpt-wide") for f in sorted(BENCH_FILES.values())]
    summary = [line for line in p.stdout.splitlines() if line.startswith(("│ gzip ", "│ gpt-wide "))]
    assert len(summary) == 2 and all(line.rstrip().endswith("✓ │") for line in summary), p.stdout
    assert "canterbury/grammar.lsp" in p.stdout and "✗" not in p.stdout
    md = (work / "lmzip-bench" / "results.md").read_text()
    assert "| canterbury_artificial/a.txt | 1 |" in md and "https://bellard.org/ts_zip/" in md
    assert sorted(p.name for p in (work / "lmzip-bench").iterdir()) == ["results.csv", "results.json", "results.md"]


def file_round_trip(env: dict[str, str], work: Path) -> None:
    """`lmzip -1 FILE` then `lmzip -d FILE.lmz` give the file back: counting's compiled loop built and cached
    in a fresh install (the default, -4, builds the mixed loop too: ~20 s more of the suite's CPU)."""
    work.mkdir()
    (work / "book.txt").write_bytes(TEXT)
    run(["lmzip", "-1", "book.txt"], work, env)
    (work / "book.txt").unlink()
    run(["lmzip", "-d", "book.txt.lmz"], work, env)
    assert (work / "book.txt").read_bytes() == TEXT


def tar_round_trip(env: dict[str, str], work: Path) -> None:
    """`tar -I 'lmzip -m gpt-wide'` (tar runs it, and it with -d, as filters) gives a small folder back: the
    model alone, static, so no compiled loop is built a second time beside file_round_trip."""
    if not shutil.which("tar"):
        return
    (work / "dir" / "sub").mkdir(parents=True)
    (work / "dir" / "a.txt").write_bytes(TEXT)
    (work / "dir" / "sub" / "b.txt").write_bytes(b"hello\n")
    # -b 1: 512-byte records, so lmzip codes 4 KB rather than tar's default 10 KB of mostly zeros
    run(["tar", "-b", "1", "-cf", "dir.tar.lmz", "-I", "lmzip -m gpt-wide", "dir"], work, env)
    (work / "back").mkdir()
    run(["tar", "-xf", "dir.tar.lmz", "-I", "lmzip -m gpt-wide", "-C", "back"], work, env)
    for f in ("a.txt", "sub/b.txt"):
        assert (work / "back" / "dir" / f).read_bytes() == (work / "dir" / f).read_bytes()
