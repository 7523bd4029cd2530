"""gzip-style invocation (lmzip -d/-t/-l, combined flags, a filter with no arguments), unlmz, lmzcat, tar -I."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lmzip import api
from lmzip.cli import lmzcat, ui, unlmz
from lmzip.cli.main import main
from lmzip.models import registry
from tests.conftest import TEXT

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "data" / "golden-gpt"


def run(*args, input=None, cli=main):
    """Run ``cli ARGS`` in-process."""
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


@pytest.mark.parametrize("args, expected", [
    (["a"], ["compress", "a"]),
    (["-dc", "x"], ["decompress", "-c", "x"]),
    (["-cd", "x"], ["decompress", "-c", "x"]),
    (["x", "--decompress"], ["decompress", "x"]),
    (["--uncompress"], ["decompress"]),
    (["-tdc", "-"], ["test", "-"]),  # -t wins over -d; -c means nothing to test
    (["-ld", "x"], ["list", "x"]),  # -l wins over both
    (["-tv", "-q", "x"], ["test", "-q", "x"]),  # test has -q, not -v
    (["-cm", "tiny", "a"], ["compress", "-c", "-m", "tiny", "a"]),
    (["-mdtiny", "a"], ["compress", "-m", "dtiny", "a"]),  # a value is never read as flags
    (["-m", "-d", "a"], ["compress", "-m", "-d", "a"]),
    (["-cdo", "out", "a"], ["decompress", "-c", "-o", "out", "a"]),
    (["-d", "--mix", "--block-size", "4M", "--model=x", "-j2"], ["decompress", "--model=x", "-j", "2"]),
    (["-k", "--", "-d", "test"], ["compress", "-k", "--", "-d", "test"]),
    (["-9", "a"], ["compress", "-9", "a"]),  # unknown everywhere: left for click to report
    (["-d", "--no-progress", "x"], ["decompress", "--no-progress", "x"]),
    (["-l", "--no-progress", "x"], ["list", "x"]),  # list draws no bar: dropped, as -c is for -t
])
def test_gzip_arguments_are_rewritten_to_a_subcommand(args, expected):
    assert main.rewrite(args) == expected


def test_compress_then_decompress_with_d(work):
    r = run("-m", "tiny-gpt", "a.txt")
    assert r.exit_code == 0, r.output
    assert (work / "a.txt.lmz").read_bytes()[:4] == b"\x89LMZ" and (work / "a.txt").exists()
    (work / "a.txt").unlink()
    r = run("-d", "a.txt.lmz")
    assert r.exit_code == 0, r.output
    assert (work / "a.txt").read_bytes() == TEXT
    r = run("-d", "a.txt.lmz")  # no overwrite without -f, and the file is untouched
    assert r.exit_code == 1 and r.stderr.strip() == "lmzip: a.txt: already exists; use -f to overwrite"
    assert run("-df", "a.txt.lmz").exit_code == 0 and (work / "a.txt").read_bytes() == TEXT


def test_decompress_to_stdout_with_combined_flags(work):
    assert run("-m", "tiny-gpt", "-q", "a.txt").exit_code == 0
    for flags in (["-dc"], ["-cd"], ["-d", "-c"], ["--decompress", "--stdout"], ["-cdq"]):
        r = run(*flags, "a.txt.lmz")
        assert r.exit_code == 0, (flags, r.output)
        assert r.stdout_bytes == TEXT, flags
        assert r.stderr == "" if flags == ["-cdq"] else r.stderr.startswith("a.txt.lmz: "), flags
    assert sorted(p.name for p in work.iterdir()) == ["a.txt", "a.txt.lmz"]


def test_stdin_to_stdout_and_back(work):
    blob = run("compress", "-m", "tiny-gpt", "-c", "a.txt").stdout_bytes
    r = run("-m", "tiny-gpt", input=TEXT)
    assert r.exit_code == 0 and r.stdout_bytes == blob
    assert run("-c", "-m", "tiny-gpt", "a.txt").stdout_bytes == blob
    r = run("-d", input=blob)
    assert r.exit_code == 0 and r.stdout_bytes == TEXT
    assert sorted(p.name for p in work.iterdir()) == ["a.txt"]


def test_no_arguments_is_a_filter(work, monkeypatch, model_frames):
    monkeypatch.setattr(registry, "DEFAULT_MODEL", "tiny-gpt")
    r = run(input=TEXT)
    assert r.exit_code == 0, r.output
    head = api.inspect(r.stdout_bytes)
    assert r.stdout_bytes[:4] == b"\x89LMZ" and (head.model_name, head.mix) == ("tiny-gpt", True)  # -4's modes
    assert run("-dc", input=r.stdout_bytes).stdout_bytes == TEXT


def test_no_arguments_on_a_terminal_prints_the_help(work, monkeypatch):
    monkeypatch.setattr(ui, "stdin_is_terminal", lambda: True)
    r = run()
    assert r.exit_code == 0 and "Usage:" in r.stdout and "lmzip [-d|-t|-l]" in r.stdout
    assert r.stdout_bytes[:4] != b"\x89LMZ"


def test_terminals_are_refused(work, monkeypatch):
    monkeypatch.setattr(ui, "stdout_is_terminal", lambda: True)
    r = run("-m", "tiny-gpt", "-c", "a.txt")
    assert r.exit_code == 1
    assert r.stderr == "lmzip: refusing to write compressed data to a terminal (use -f to force)\n"
    monkeypatch.setattr(ui, "stdin_is_terminal", lambda: True)
    for args in (["-d"], ["decompress", "-c"], ["-t"], ["test", "-"]):
        r = run(*args)
        assert r.exit_code == 1, args
        hint = "" if args[0] in ("-t", "test") else " (use -f to force)"
        assert r.stderr == f"lmzip: refusing to read compressed data from a terminal{hint}\n", args


def test_t_and_test_dash_read_stdin(work):
    blob = run("compress", "-m", "tiny-gpt", "-c", "a.txt").stdout_bytes
    for args in (["-t"], ["test", "-"], ["test"], ["-t", "-"], ["-tv"]):
        r = run(*args, input=blob)
        assert r.exit_code == 0 and r.stderr == "-: OK\n", args
        assert r.stdout_bytes == b""
    r = run("-t", input=blob[:-3])
    assert r.exit_code == 1 and r.stderr.startswith("lmzip: -: ") and "truncated" in r.stderr
    assert r.stderr.count("\n") == 1
    r = run("test", "-", input=b"plain text")
    assert r.exit_code == 1 and "bad magic" in r.stderr and "No such file" not in r.stderr


def test_t_and_l_on_files(work):
    run("-m", "tiny-gpt", "a.txt")
    r = run("-t", "a.txt.lmz")
    assert r.exit_code == 0 and r.stderr == "a.txt.lmz: OK\n"
    r = run("-l", "a.txt.lmz")
    assert r.exit_code == 0 and "tiny-gpt" in r.stdout and f"{len(TEXT):,}" in r.stdout
    r = run("--list", "--json", "a.txt.lmz")
    assert r.exit_code == 0 and f'"original_bytes": {len(TEXT)}' in r.stdout
    r = run("-t", "missing.lmz")
    assert r.exit_code == 1 and r.stderr == "lmzip: missing.lmz: No such file or directory\n"
    assert sorted(p.name for p in work.iterdir()) == ["a.txt", "a.txt.lmz"]


def test_keep_and_rm_pass_through(work):
    assert run("-k", "--rm", "-m", "tiny-gpt", "a.txt").exit_code == 0
    assert not (work / "a.txt").exists()
    assert run("-d", "--rm", "a.txt.lmz").exit_code == 0
    assert sorted(p.name for p in work.iterdir()) == ["a.txt"] and (work / "a.txt").read_bytes() == TEXT


def test_subcommands_still_win(work):
    r = run("models", "--json")
    assert r.exit_code == 0 and '"name": "tiny-gpt"' in r.stdout
    assert run("-V").stdout.startswith("lmzip, version")
    assert "Commands:" in run("-h").stdout


def test_unlmz_and_lmzcat(work):
    assert run("-m", "tiny-gpt", "-q", "a.txt").exit_code == 0
    blob = (work / "a.txt.lmz").read_bytes()
    r = run("a.txt.lmz", cli=lmzcat)
    assert r.exit_code == 0 and r.stdout_bytes == TEXT
    r = run(cli=lmzcat, input=blob)
    assert r.exit_code == 0 and r.stdout_bytes == TEXT
    r = run("a.txt.lmz", cli=unlmz)  # a.txt exists: refused, nothing overwritten
    assert r.exit_code == 1 and r.stderr == "lmzip: a.txt: already exists; use -f to overwrite\n"
    (work / "a.txt").unlink()
    r = run("a.txt.lmz", cli=unlmz)
    assert r.exit_code == 0 and (work / "a.txt").read_bytes() == TEXT and (work / "a.txt.lmz").exists()
    r = run("-c", cli=unlmz, input=blob)
    assert r.exit_code == 0 and r.stdout_bytes == TEXT
    r = run("-t", cli=unlmz, input=blob)
    assert r.exit_code == 0 and r.stderr == "-: OK\n"
    r = run("a.txt", cli=unlmz)
    assert r.exit_code == 2 and r.stderr == "lmzip: a.txt: unknown suffix -- ignored (expected .lmz)\n"


@pytest.mark.skipif(shutil.which("tar") is None, reason="needs tar")
def test_tar_uses_lmzip_as_its_compressor(tmp_path):
    """tar -I lmzip: compress as a filter with no arguments, decompress with -d."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    model = ["-m", str(GOLDEN)] if (GOLDEN / "config.json").exists() else []  # else the default shipped model
    wrapper = bin_dir / "lmzip"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m lmzip -q {' '.join(model)} \"$@\"\n")
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    src = tmp_path / "dir"
    (src / "sub").mkdir(parents=True)
    contents = {"a.txt": TEXT, "sub/b.txt": b"hello tar\n" * 30, "empty.txt": b""}
    for name, data in contents.items():
        (src / name).write_bytes(data)
    (tmp_path / "out").mkdir()
    for args in (["-cf", "x.tar.lmz", "-I", "lmzip", "dir"], ["-xf", "x.tar.lmz", "-I", "lmzip", "-C", "out"]):
        r = subprocess.run(["tar", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "x.tar.lmz").read_bytes()[:4] == b"\x89LMZ"
    for name, data in contents.items():
        assert (tmp_path / "out" / "dir" / name).read_bytes() == data, name
