"""`lmzip bench --ray`: without Ray one line and exit 2; with Ray (the `cluster` marker, in `make test`) a head
on loopback started and stopped here, each compressor × file a task, the rows gathered into one results JSON."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from lmzip.bench import cluster
from lmzip.cli.main import main
from lmzip.errors import LmzipError

ROOT = Path(__file__).resolve().parents[2]


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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def session(sid: int) -> list[str]:
    """Processes still in the session the head was started in (a head that leaves none behind)."""
    r = subprocess.run(["ps", "-o", "pid=,comm=", "-s", str(sid)], capture_output=True, text=True)
    return r.stdout.split("\n")[:-1]


@pytest.fixture()
def ray_env(tmp_path):
    """The environment of the head and of lmzip: a token of this test's own (Ray's services listen on every
    interface whatever the node address, so they are not left open; nothing is written to ~/.ray), the
    driver's address kept on loopback (Ray would swap 127.0.0.1 for this machine's address), no draining
    on SIGTERM (30 s), no usage stats, and lmzip importable by the workers."""
    pytest.importorskip("ray")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16), "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
            "OMP_NUM_THREADS": "1", "LMZIP_MODELS": str(tmp_path / "none")}


@pytest.fixture()
def ray_head(ray_env):
    """A Ray head on 127.0.0.1 in its own session, stopped (the whole session) when the test ends."""
    port, temp = free_port(), tempfile.mkdtemp(prefix="lmzray")  # short: Ray's sockets live in it
    cmd = [sys.executable, "-c", "from ray.scripts.scripts import main; main()", "start", "--head", "--block",
           f"--port={port}", "--node-ip-address=127.0.0.1", "--num-cpus=2", "--include-dashboard=false",
           "--disable-usage-stats", f"--temp-dir={temp}"]
    head = subprocess.Popen(cmd, env=ray_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert head.poll() is None and time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # --block: the head stops its services on SIGTERM
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait(timeout=10)
        deadline = time.monotonic() + 20
        while session(head.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = session(head.pid)
        if left:
            os.killpg(head.pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)
        assert not left, f"the Ray head left processes behind: {left}"


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
