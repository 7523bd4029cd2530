"""Faults: a `lmzip compress` running groups side by side, killed or interrupted, leaves no output,
no temp file and no process behind, and keeps its input."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.conftest import writing

DATA = Path(__file__).resolve().parent.parent / "data"
ALICE = Path(__file__).resolve().parents[2] / "corpora" / "canterbury" / "alice29.txt"


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (read from /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(d.name))
            except (OSError, ValueError, IndexError):
                pass
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("how", ["SIGKILL", "Ctrl-C", "SIGTERM"])
def test_a_stopped_compress_of_groups_side_by_side_leaves_nothing_behind(tmp_path, how):
    src = tmp_path / "big.txt"
    # 9,506 segments of 16 bytes: 77 groups, 2 at once (40 KB once finished before the stop came, a second after
    # it began writing)
    src.write_bytes(ALICE.read_bytes())
    args = [sys.executable, "-m", "lmzip", "compress", "-q", "--jobs", "2", "--segment", "16",
            "-m", str(DATA / "golden-gpt"), "big.txt"]
    # as from a terminal: SIGINT at its default even where this test runs in the background (which ignores it)
    p = subprocess.Popen(args, cwd=tmp_path, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None and not writing(p.pid, tmp_path):
        time.sleep(0.05)
    kids = children(p.pid)  # none since groups run in threads; any there must end with it
    assert p.poll() is None, "the compression ended before it could be stopped"
    time.sleep(0.5)  # let both groups run
    if how == "SIGKILL":
        p.kill()
    elif how == "SIGTERM":  # as `kill` and service managers stop it: the process alone
        p.terminate()
    else:  # a terminal's Ctrl-C reaches the whole process group
        os.killpg(p.pid, signal.SIGINT)
    err = p.communicate(timeout=60)[1]  # the groups stop at their next step
    deadline = time.time() + 10
    while time.time() < deadline and any(Path(f"/proc/{k}").exists() for k in kids):
        time.sleep(0.1)
    assert not [k for k in kids if Path(f"/proc/{k}").exists()], "a child process outlived its parent"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["big.txt"]  # no output, no temp file, input kept
    if how == "Ctrl-C":
        assert p.returncode == 130
        assert err.strip().splitlines() == ["lmzip: interrupted; no output was written"], err
    if how == "SIGTERM":  # one line, and the groups' threads stopped
        assert p.returncode == 143
        assert err.strip().splitlines() == ["lmzip: terminated; no output was written"], err
