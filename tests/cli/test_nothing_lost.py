"""Nothing lost: same-file input and output, a writer that got there first, concatenated files, names
the system refuses, unreadable inputs, no writable home; every way a user's bytes could go with exit 0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

import lmzip
from lmzip import files
from lmzip.cli import main
from lmzip.errors import LmzipError

ROOT = Path(__file__).resolve().parents[2]
ALICE = (ROOT / "corpora" / "canterbury" / "alice29.txt").read_bytes()
DATA = ROOT / "tests" / "data"


def lmz(*args: str, input: bytes | None = None):
    return CliRunner().invoke(main, list(args), input=input)


@pytest.fixture()
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").write_bytes(ALICE[:3000])
    return tmp_path


@pytest.mark.parametrize("args, name", [(["-1", "--rm", "-f", "-o", "x", "x"], "x"),
                                        (["-d", "--rm", "-f", "-o", "x.lmz", "x.lmz"], "x.lmz")])
def test_rm_never_removes_the_only_copy(here, args, name):
    blob = lmzip.compress(ALICE[:3000], model="cm-1")
    (here / name).write_bytes(ALICE[:3000] if name == "x" else blob)
    os.link(here / name, here / "other-name")  # a second name of the same file is the same file too
    r = lmz(*args)
    assert r.exit_code == 1 and "the input and the output are the same file" in r.output
    assert (here / name).read_bytes() == (ALICE[:3000] if name == "x" else blob)
    r = lmz(*args[:-3], "-o", "other-name", name)
    assert r.exit_code == 1 and "the same file" in r.output and (here / name).exists()


def test_remove_input_refuses_the_output():
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "f"
        p.write_bytes(b"x")
        with pytest.raises(LmzipError, match="it is the output"):
            files.remove_input(p, p)
        assert p.exists()


@pytest.mark.parametrize("force", [False, True])
def test_a_file_that_appears_while_writing_is_replaced_only_with_force(tmp_path, force):
    dst = tmp_path / "o.lmz"
    if force:
        with files.atomic_output(dst, force=True) as f:
            f.write(b"mine")
            dst.write_bytes(b"the other writer's")
        assert dst.read_bytes() == b"mine"
    else:
        with pytest.raises(LmzipError, match="o.lmz: already exists"), files.atomic_output(dst, force=False) as f:
            f.write(b"mine")
            dst.write_bytes(b"the other writer's")  # another lmzip finished first
        assert dst.read_bytes() == b"the other writer's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.lmz"]  # no temporary left


def test_a_name_too_long_is_one_line_and_the_next_file_is_still_done(here):
    long = "n" * 252
    (here / long).write_bytes(ALICE[:100])
    r = lmz("-1", long, "a")
    assert r.exit_code == 1, r.output
    assert r.output.splitlines()[0] == f"lmzip: {long}.lmz: File name too long"
    assert "Traceback" not in r.output and lmzip.decompress((here / "a.lmz").read_bytes()) == ALICE[:3000]


def test_concatenated_files_decode_to_the_concatenation(here):
    a3 = lmz("-1", "-q", "-c", "a").stdout_bytes
    several = lmz("-1", "-q", "-c", "--block-size", "1K", "a").stdout_bytes  # counting frames in blocks
    stored = lmz("-1", "-q", "-c", "-", input=b"").stdout_bytes  # an empty file: a stored short frame
    (here / "cc.lmz").write_bytes(a3 + a3 + several + stored + a3)
    want = ALICE[:3000] * 4
    r = lmz("-d", "-c", "cc.lmz")
    assert r.exit_code == 0 and r.stdout_bytes == want, r.output[-300:]
    assert lmz("-t", "cc.lmz").output.strip() == "cc.lmz: OK"
    (row,) = json.loads(lmz("-l", "--json", "cc.lmz").stdout)
    assert row["original_bytes"] == len(want) and row["members"] == 5
    assert row["compressed_bytes"] == (here / "cc.lmz").stat().st_size


@pytest.mark.parametrize("tail", [b"x", b"\0" * 100, b"\x89LMZ", b"\x89LM"])
def test_bytes_after_a_file_that_are_no_file_are_an_error(here, tail):
    a3 = lmz("-1", "-q", "-c", "a").stdout_bytes
    for blob in (a3, a3 + a3):
        (here / "t.lmz").write_bytes(blob + tail)
        r = lmz("-d", "-c", "t.lmz")
        assert r.exit_code == 1 and ("trailing garbage" in r.output or "truncated" in r.output), r.output
        assert lmz("-t", "t.lmz").exit_code == 1 and lmz("-l", "t.lmz").exit_code == 1


def test_files_of_lmzip_0_7_concatenated_still_decode():
    """A format-10 short frame has no payload length; where it ends is found by decoding it and coding the
    bytes again, so a file after it is read as one and other bytes after it are an error."""
    v10 = (DATA / "counted-v10.lmz").read_bytes()
    want, new = lmzip.decompress(v10), lmzip.compress(b"new", model="cm-1")
    assert lmzip.decompress(v10 + v10) == want * 2
    assert lmzip.decompress(v10 + new + v10) == want + b"new" + want
    for bad in (v10 + b"\0" * 5000, v10 + b"x", v10[:-1] + bytes([v10[-1] ^ 4]) + new):  # the last: fuzz.py's
        with pytest.raises(LmzipError, match="corrupt|trailing garbage|as long as the original"):
            lmzip.decompress(bad)


def test_small_things(here):
    r = lmz("-10", "a")
    assert r.exit_code == 2 and "no level -10: the levels are -1 (fastest) to -9 (smallest)" in r.output
    r = lmz("-1", "-f", "-", input=ALICE[:1000])  # a filter, as tar -I runs it: nothing on stderr
    assert r.exit_code == 0 and r.stderr == "" and lmzip.decompress(r.stdout_bytes) == ALICE[:1000]
    assert "bpb" in lmz("-1", "-v", "-f", "-", input=ALICE[:1000]).stderr
    (here / "e").write_bytes(b"")
    r = lmz("-1", "e")
    assert r.exit_code == 0 and "e: empty (0 B => 15 B" in r.stderr and "120" not in r.stderr


# --- as a user who may not write the install, has no home, and cannot read a file ---------------------

def _unprivileged() -> list[str]:
    """The command prefix that runs Python as an unprivileged user with lmzip importable (skips where none)."""
    if os.geteuid() != 0:
        return [sys.executable]
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no way to drop to an unprivileged user")
    user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
    for python in (sys.executable, f"/usr/bin/python{sys.version_info[0]}.{sys.version_info[1]}"):
        cmd = [*user, "env", "-i", "HOME=/nonexistent", "PATH=/usr/bin:/bin",
               f"PYTHONPATH={ROOT}:{sysconfig.get_paths()['purelib']}", python]
        ok = subprocess.run([*cmd, "-c", "import numba, click, rich, lmzip"], capture_output=True)
        if ok.returncode == 0:
            return cmd
    pytest.skip("no Python that an unprivileged user may run with lmzip's packages (the venv's lies under /root)")


@pytest.fixture()
def shared():
    """A folder every user may write (pytest's own are the running user's alone)."""
    d = Path(tempfile.mkdtemp(prefix="lmzip-test-"))
    d.chmod(0o777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_no_writable_install_or_home_still_compresses(shared):
    """numba caches beside the sources or in the home's cache; with neither writable it refused to compile
    (a 60-line traceback); now a private folder under the temp folder takes the compiled code, and first gets what
    the install's own folders hold (this process compiled counting's loop there: tests/conftest.py), so the loop is
    loaded, not compiled again (~1 min a user)."""
    prefix = _unprivileged()
    (shared / "ex").write_bytes(ALICE[:5000])
    (shared / "ex").chmod(0o644)
    r = subprocess.run([*prefix, "-m", "lmzip", "-1", "-q", "-f", "ex"], cwd=shared, capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr[-2000:]
    assert lmzip.decompress((shared / "ex.lmz").read_bytes()) == ALICE[:5000]
    if prefix[0] == sys.executable:  # not root: this user's install was writable, nothing was private
        return
    from numba.core.caching import UserWideCacheLocator

    cm = ROOT / "lmzip" / "cm"
    where = subprocess.run([*prefix, "-c", "import os, lmzip; print(os.environ['NUMBA_CACHE_DIR'])"], cwd=shared,
                           capture_output=True, text=True).stdout.strip()
    private = Path(where) / UserWideCacheLocator.get_suitable_cache_subpath(str(cm / "model.py"))
    (index,) = (cm / "__pycache__").glob("model._code-*.nbi")
    assert (private / "cm-sources.sha256").read_bytes() == (cm / "__pycache__" / "cm-sources.sha256").read_bytes()
    assert (private / index.name).stat().st_mtime == index.stat().st_mtime, "the loop was compiled again"


def test_an_unreadable_input_is_one_line_and_the_others_are_done(shared):
    prefix = _unprivileged()
    for name in ("noread", "good"):
        (shared / name).write_bytes(ALICE[:2000])
        (shared / name).chmod(0o644)
    (shared / "noread").chmod(0)
    if os.geteuid() != 0 and os.access(shared / "noread", os.R_OK):
        pytest.skip("this user reads files whose mode says no one may")
    r = subprocess.run([*prefix, "-m", "lmzip", "-1", "-q", "noread", "good"], cwd=shared, capture_output=True,
                       text=True)
    assert r.returncode == 1 and r.stderr.strip() == "lmzip: noread: Permission denied", r.stderr[-2000:]
    assert lmzip.decompress((shared / "good.lmz").read_bytes()) == ALICE[:2000]
    assert not (shared / "noread.lmz").exists()
