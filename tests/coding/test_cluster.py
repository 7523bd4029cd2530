"""`lmzip compress --ray` / `decompress --ray`: every block a Ray task, the very file a local run writes; without
Ray one line and exit 2. The Ray test (marker `cluster`, in `make test`) runs on a head and a second node,
both on loopback: the blocks spread over both, coded and decoded on either."""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest
from click.testing import CliRunner

from lmzip import api
from lmzip.cli.main import main
from lmzip.coding import cluster
from lmzip.models.checkpoint import save_model
from lmzip.models.tokenizer import ByteTokenizer
from tests.conftest import TEXT, tiny


@pytest.mark.parametrize("command", ["compress", "decompress"])
def test_ray_without_ray_is_one_line_and_exit_2(tmp_path, monkeypatch, command):
    monkeypatch.setattr(cluster, "available", lambda: False)
    (tmp_path / "a.txt").write_bytes(b"abc" * 100)
    r = CliRunner().invoke(main, [command, "--ray", str(tmp_path / "a.txt")])
    assert r.exit_code == 2 and r.stderr == "lmzip: --ray needs Ray, which is not installed: pip install " \
        "'lmzip[cluster]'\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


@pytest.mark.cluster
def test_blocks_on_two_ray_nodes_write_the_local_file(ray_head, ray_env, tmp_path):
    folder = tmp_path / "tiny-gpt"
    save_model(tiny("gpt"), ByteTokenizer(), folder)  # the workers load it from its folder
    data = TEXT * 4 + bytes(range(256)) * 2  # five blocks of 1 KiB: mixed, counted and stored frames
    (tmp_path / "a.txt").write_bytes(data)

    def lmzip(*args: str) -> bytes:
        r = subprocess.run([sys.executable, "-m", "lmzip", args[0], "-v", *args[1:]], env=ray_env, capture_output=True,
                           timeout=240)
        assert r.returncode == 0, r.stderr.decode()[-3000:]
        assert b"; 5 blocks on 2 Ray nodes" in r.stderr  # spread over the head and the second node
        return r.stdout

    local = api.LMCompressor(str(folder), mix=True, block_size=1024, jobs=1).compress(data)  # here, in-process
    flags = ["-m", str(folder), "--mix", "--block-size", "1K", "-c", str(tmp_path / "a.txt")]
    assert lmzip("compress", f"--ray={ray_head}", *flags) == local
    (tmp_path / "a.lmz").write_bytes(local)
    assert lmzip("decompress", f"--ray={ray_head}", "-m", str(folder), "-c", str(tmp_path / "a.lmz")) == data


@pytest.mark.parametrize("given, imported, own", [({}, False, True), ({"RAY_AUTH_TOKEN": "mine"}, False, False),
                                                  ({"RAY_AUTH_MODE": "disabled"}, False, False), ({}, True, False)])
def test_a_local_instance_gets_a_token_of_its_own_not_one_in_home(monkeypatch, given, imported, own):
    """--ray without an address starts Ray with a token of the process's own (Ray would write
    ~/.ray/auth_token); a token or mode the user set is theirs, and once Ray is imported it is too late."""
    for k in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE"):
        monkeypatch.setenv(k, "")  # so that what own_token() sets is undone after the test
        monkeypatch.delenv(k)
    for k, v in given.items():
        monkeypatch.setenv(k, v)
    if imported:
        monkeypatch.setitem(sys.modules, "ray", types.ModuleType("ray"))
    else:
        monkeypatch.delitem(sys.modules, "ray", raising=False)
    assert cluster.own_token() is own
    if own:
        assert os.environ["RAY_AUTH_MODE"] == "token" and len(os.environ["RAY_AUTH_TOKEN"]) == 32
    else:
        assert {k: os.environ.get(k) for k in given} == given and ("RAY_AUTH_TOKEN" in os.environ) == bool(
            given.get("RAY_AUTH_TOKEN"))
