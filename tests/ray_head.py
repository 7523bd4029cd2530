"""A Ray head on loopback for the `cluster` tests (bench --ray, compress and decompress --ray): started in
its own session with a token of its own, stopped (the whole session) when the test ends."""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def session(sid: int) -> list[str]:
    """Processes still in the session the head was started in (a head that leaves none behind)."""
    r = subprocess.run(["ps", "-o", "pid=,comm=", "-s", str(sid)], capture_output=True, text=True)
    return r.stdout.split("\n")[:-1]


@pytest.fixture(scope="session")
def ray_env(tmp_path_factory):
    """The environment of the head and of lmzip: a token of this test's own (Ray's services listen on every
    interface whatever the node address, so they are not left open; nothing is written to ~/.ray), the
    driver's address kept on loopback (Ray would swap 127.0.0.1 for this machine's address), no draining
    on SIGTERM (30 s), no usage stats, and lmzip importable by the workers."""
    pytest.importorskip("ray")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16), "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0",
            "OMP_NUM_THREADS": "1", "LMZIP_MODELS": str(tmp_path_factory.mktemp("ray") / "none")}


@pytest.fixture(scope="session")
def ray_head(ray_env):
    """A Ray head on 127.0.0.1 in its own session, stopped (the whole session) when the test session ends;
    the cluster tests share it (starting one takes ~10 s)."""
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


