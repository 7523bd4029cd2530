"""benchmarks/roundtrip.sh: separate-process round trips, and resuming a run that was stopped."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "roundtrip.sh"
LMZIP = ROOT / ".venv" / "bin" / "lmzip"
RUN = "lstm-nano_scratch_300"  # from seeded random weights: no shipped model needed

pytestmark = pytest.mark.skipif(not LMZIP.exists(), reason="roundtrip.sh runs .venv/bin/lmzip")


@pytest.fixture
def corpus(tmp_path):
    c = tmp_path / "corpus"
    (c / "sub").mkdir(parents=True)
    (c / "a.txt").write_bytes(b"the cat sat on the mat. " * 20)
    (c / "sub" / "b").write_bytes(bytes(range(256)) * 2)
    return c


def script(tmp_path, corpus):
    env = dict(os.environ, ROUNDTRIP_WORK=str(tmp_path / "work"), ROUNDTRIP_RESULTS=str(tmp_path / "out"))
    return subprocess.run(["bash", str(SCRIPT), "scratch", "lstm-nano", "300", str(corpus)],
                          env=env, capture_output=True, text=True)


def rows(tmp_path):
    lines = (tmp_path / "out" / f"{RUN}.tsv").read_text().splitlines()
    return [line.split("\t") for line in lines[1:]]


def test_every_file_comes_back_and_the_work_is_cleared(tmp_path, corpus):
    r = script(tmp_path, corpus)
    assert r.returncode == 0, r.stderr
    assert [(f, size, result) for f, size, _, _, result in rows(tmp_path)] == \
        [("a.txt", "300", "exact"), ("sub_b", "300", "exact")]
    log = (tmp_path / "out" / f"{RUN}.tsv.log").read_text()
    assert log.startswith("scratch (lstm-nano, 300): 2 files, 0 different;") and "attempts" not in log
    assert not (tmp_path / "work" / RUN).exists()


def test_a_stopped_run_goes_on_where_it_stopped(tmp_path, corpus):
    # What a run stopped while compressing leaves: the copies, one finished .lmz, the temporary
    # of the file it was writing, and the start time of the attempt.
    work = tmp_path / "work" / RUN
    (work / "orig").mkdir(parents=True)
    (work / "in").mkdir()
    for name, src in (("a.txt", corpus / "a.txt"), ("sub_b", corpus / "sub" / "b")):
        (work / "orig" / name).write_bytes(src.read_bytes()[:300])
        (work / "in" / name).write_bytes(src.read_bytes()[:300])
    subprocess.run([sys.executable, "-m", "lmzip", "compress", "-q", "-m", "lstm-nano", "--adapt", "--seed", "0",
                    str(work / "in" / "a.txt")], check=True, cwd=ROOT)
    (work / "in" / ".sub_b.lmz.x.tmp").write_bytes(b"half")
    for d in ("compress", "decompress"):
        (work / f"{d}.s").write_text("100\n")
    (work / "compress.start").write_text(f"{int(time.time()) - 30}\n")
    (work / "attempts").write_text("0000000\n")
    r = script(tmp_path, corpus)
    # a.txt.lmz is not written again: lmzip would refuse to overwrite it and the run would fail
    assert r.returncode == 0, r.stderr
    assert "resuming" in r.stderr
    assert [result for *_, result in rows(tmp_path)] == ["exact", "exact"]
    log = (tmp_path / "out" / f"{RUN}.tsv.log").read_text()
    seconds = int(log.split("compress ")[1].split(" s")[0])
    assert seconds >= 100  # the earlier attempts' seconds are kept
    assert "git 0000000+" in log and log.rstrip().endswith("2 attempts")
