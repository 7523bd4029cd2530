"""Crash consistency: SIGKILL at points spread through `compress` and through `decompress` of a file of
several frames (mixed, counted and stored): no file ever appears under the final name unless complete
and correct, no temporary file is left, and the input is intact every time."""

from __future__ import annotations

import hashlib
import io
import random
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.cli.conftest import writing
from tests.conftest import TEXT

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "tests" / "data" / "golden-gpt"
POINTS = 4  # in each of compress and decompress: 8 in all, at 1/5 … 4/5 of the time each holds its output open
ALICE = (ROOT / "corpora" / "canterbury" / "alice29.txt").read_bytes()


def _input() -> bytes:
    rnd = random.Random(7)
    return ALICE[:2048] + TEXT * 2 + bytes(rnd.randrange(256) for _ in range(1024)) + TEXT


def _command(mode: str) -> list[str]:
    common = [sys.executable, "-m", "lmzip", mode, "-q", "-j", "1", "-m", str(MODEL)]
    if mode == "compress":
        return [*common, "--mix", "--block-size", "1K", "in.bin"]
    return [*common, "in.bin.lmz"]


def _run(folder: Path, cmd: list[str], kill_at: float | None) -> tuple[float, float, int]:
    """Run ``cmd`` in ``folder``; with ``kill_at``, SIGKILL it that many seconds after its output was opened.
    Returns (when the output was opened, when it ended, its exit status), in seconds from the start."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    opened = None
    while p.poll() is None:
        now = time.perf_counter() - t0
        if opened is None and writing(p.pid, folder):
            opened = now
        if kill_at is not None and opened is not None and now >= opened + kill_at:
            p.kill()
            break
        time.sleep(0.005)
    p.wait(timeout=120)
    return opened or 0.0, time.perf_counter() - t0, p.returncode


def _check(folder: Path, final: str, want: bytes, inputs: dict[str, str]) -> None:
    names = sorted(p.name for p in folder.iterdir())
    assert names in (sorted(inputs), sorted([*inputs, final])), names  # no temporary file left
    for name, digest in inputs.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, f"{name} changed"
    if final in names:  # only ever complete and correct
        assert (folder / final).read_bytes() == want
        (folder / final).unlink()


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc to see when the output is opened")
def test_sigkill_anywhere_leaves_a_whole_file_or_none(tmp_path):
    from lmzip.coding import format as fmt

    data = _input()
    c, d = tmp_path / "c", tmp_path / "d"
    c.mkdir()
    d.mkdir()
    (c / "in.bin").write_bytes(data)
    assert _run(c, _command("compress"), None)[2] == 0
    blob = (c / "in.bin.lmz").read_bytes()
    heads = [h for h, _ in fmt.read_frames(io.BytesIO(blob))]
    kinds = {"stored" if h.stored else "counted" if h.counting else "mixed" for h in heads}
    assert kinds >= {"counted", "mixed"}, kinds
    (c / "in.bin.lmz").rename(d / "in.bin.lmz")
    cases = [(c, "compress", "in.bin", "in.bin.lmz", blob), (d, "decompress", "in.bin.lmz", "in.bin", data)]
    # compress and decompress run side by side (two cores), first to see how long each holds its output open
    with ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda case: _run(case[0], _command(case[1]), None), cases))
        spans = {}
        for (folder, mode, _, final, want), (opened, ended, status) in zip(cases, runs, strict=True):
            assert status == 0 and (folder / final).read_bytes() == want
            (folder / final).unlink()
            spans[mode] = max(0.05, ended - opened)
        digests = {mode: hashlib.sha256((f / src).read_bytes()).hexdigest() for f, mode, src, _, _ in cases}
        for i in range(1, POINTS + 1):
            at = {mode: span * i / (POINTS + 1) for mode, span in spans.items()}
            list(pool.map(lambda case, at=at: _run(case[0], _command(case[1]), at[case[1]]), cases))
            for folder, mode, src, final, want in cases:
                _check(folder, final, want, {src: digests[mode]})
