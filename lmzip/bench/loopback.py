"""A Ray cluster on loopback (127.0.0.1) for the cluster tests and benchmarks/ray_scaling.py: a head and more
nodes joined to it, each a `ray start --block` in its own session with a token of its own, one CPU each, stopped
(every process of their sessions) on leaving. Ray is started as a command, never imported here."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

# the folder lmzip is imported from (a checkout, or site-packages), put on the nodes' PYTHONPATH
ROOT = Path(__file__).resolve().parents[2]
RAY = [sys.executable, "-c", "from ray.scripts.scripts import main; main()", "start", "--block",
       "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def session(sid: int) -> list[str]:
    """Processes still in the session a node was started in (a node that leaves none behind)."""
    r = subprocess.run(["ps", "-o", "pid=,comm=", "-s", str(sid)], capture_output=True, text=True)
    return r.stdout.split("\n")[:-1]


def environment(models: Path | None = None) -> dict[str, str]:
    """The nodes' and lmzip's environment: a token of its own (Ray's services listen on every interface whatever
    the node address), no draining on SIGTERM, no usage stats, one thread, lmzip importable by the workers
    (``models``: LMZIP_MODELS, the user's models; None: as this process has it)."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, **({"LMZIP_MODELS": str(models)} if models else {}), "PYTHONPATH": path,
            "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16), "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0", "OMP_NUM_THREADS": "1"}


def _start(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    with open(log, "wb") as out:
        return subprocess.Popen(RAY + args, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def _wait(node: subprocess.Popen, log: Path, what: str) -> None:
    """Until ``ray start --block`` says the node runs (it has then joined the cluster), for at most 90 s."""
    deadline = time.monotonic() + 90
    while b"Ray runtime started" not in log.read_bytes():
        if node.poll() is not None or time.monotonic() >= deadline:
            raise RuntimeError(f"the Ray {what} did not start: {log.read_text()[-2000:]}")
        time.sleep(0.3)


def _stop(node: subprocess.Popen) -> list[str]:
    """SIGTERM to the node's session (--block: it stops its services), SIGKILL after 30 s; what is left."""
    with contextlib.suppress(ProcessLookupError):  # a node that failed to start may have left nothing
        os.killpg(node.pid, signal.SIGTERM)
    try:
        node.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(node.pid, signal.SIGKILL)
        node.wait(timeout=10)
    deadline = time.monotonic() + 20
    while session(node.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = session(node.pid)
    if left:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.pid, signal.SIGKILL)
    return left


@contextlib.contextmanager
def loopback_cluster(env: dict, nodes: int = 2) -> Iterator[str]:
    """The head's address: a head on 127.0.0.1 and ``nodes - 1`` more nodes joined to it, one CPU each, all
    stopped (every process of their sessions) on leaving; starting two takes ~15 s."""
    port, temp = free_port(), Path(tempfile.mkdtemp(prefix="lmzray"))  # short: Ray's sockets live in it
    started = [_start(["--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp}"], env,
                      temp / "node0.log")]
    try:
        _wait(started[0], temp / "node0.log", "head")
        for i in range(1, nodes):
            started.append(_start([f"--address=127.0.0.1:{port}"], env, temp / f"node{i}.log"))
            _wait(started[-1], temp / f"node{i}.log", f"node {i}")
        yield f"127.0.0.1:{port}"
    finally:
        left = [p for n in reversed(started) for p in _stop(n)]
        shutil.rmtree(temp, ignore_errors=True)
        if left:
            raise RuntimeError(f"the Ray nodes left processes behind: {left}")
