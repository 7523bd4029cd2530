"""`lmzip compress --ray` / `decompress --ray`: every block a Ray task, the very file a local run writes; without
Ray one line and exit 2. The Ray test (marker `cluster`, in `make test`) runs on a loopback head."""

from __future__ import annotations

import subprocess
import sys

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
def test_blocks_as_ray_tasks_write_the_local_file(ray_head, ray_env, tmp_path):
    folder = tmp_path / "tiny-gpt"
    save_model(tiny("gpt"), ByteTokenizer(), folder)  # the workers load it from its folder
    data = TEXT * 4 + bytes(range(256)) * 2  # five blocks of 1 KiB: mixed, counted and stored frames
    (tmp_path / "a.txt").write_bytes(data)

    def lmzip(*args: str) -> bytes:
        r = subprocess.run([sys.executable, "-m", "lmzip", *args], env=ray_env, capture_output=True, timeout=240)
        assert r.returncode == 0, r.stderr.decode()[-3000:]
        return r.stdout

    local = api.LMCompressor(str(folder), mix=True, block_size=1024, jobs=1).compress(data)  # here, in-process
    flags = ["-m", str(folder), "--mix", "--block-size", "1K", "-c", str(tmp_path / "a.txt")]
    assert lmzip("compress", f"--ray={ray_head}", *flags) == local
    (tmp_path / "a.lmz").write_bytes(local)
    assert lmzip("decompress", f"--ray={ray_head}", "-m", str(folder), "-c", str(tmp_path / "a.lmz")) == data
