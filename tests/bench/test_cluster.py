"""`lmzip bench --ray`: without Ray one line and exit 2; with Ray (the `cluster` marker, in `make test`) a head
on loopback started and stopped here, each compressor × file a task, the rows gathered into one results JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lmzip.bench import cluster
from lmzip.cli.main import main
from lmzip.errors import LmzipError


def test_ray_without_ray_is_one_line_and_exit_2(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster, "available", lambda: False)
    (tmp_path / "a.txt").write_bytes(b"abc" * 100)
    r = CliRunner().invoke(main, ["bench", str(tmp_path / "a.txt"), "--compressors", "gzip", "--ray",
                                  "--out", str(tmp_path / "res")])
    assert r.exit_code == 2 and r.stderr == "lmzip: --ray needs Ray, which is not installed: pip install " \
        "'lmzip[cluster]'\n" and not (tmp_path / "res").exists()


@pytest.mark.parametrize("address", ["local", "auto", "127.0.0.1:6379", "ray://10.0.0.1:10001"])
def test_ray_addresses(address):
    assert cluster.check_address(address) == address


def test_a_file_taken_for_an_address_is_one_line():
    with pytest.raises(LmzipError, match="--ray 'a.txt': not a Ray address"):
        cluster.check_address("a.txt")


@pytest.mark.cluster
def test_bench_on_a_ray_head(ray_head, ray_env, tmp_path):
    for n in "ab":
        (tmp_path / f"{n}.txt").write_bytes(n.encode() * 500 + b"xyz" * 100)
    res = tmp_path / "res"
    cmd = [sys.executable, "-m", "lmzip", "bench", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"),
           "--compressors", "gzip,bzip2", f"--ray={ray_head}", "--out", str(res), "--no-plots", "-q"]
    r = subprocess.run(cmd, env=ray_env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads((res / "results.json").read_text())["rows"]
    assert [(x["compressor"], Path(x["file"]).name) for x in rows] == [
        ("gzip", "a.txt"), ("gzip", "b.txt"), ("bzip2", "a.txt"), ("bzip2", "b.txt")]
    assert all(x["verified"] and x["original_bytes"] == 800 for x in rows)
