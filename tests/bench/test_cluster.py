"""`lmzip bench --ray`: without Ray one line and exit 2; with Ray (the `cluster` marker, in `make test`) a head
on loopback started and stopped here, each compressor × file a task, the rows gathered into one results JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lmzip.bench import cluster, compressors, runner
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
def test_bench_on_two_ray_nodes(ray_head, ray_env, tmp_path):
    """2 compressors × 3 files: the sizes of a local run, every row decompressed on the other node."""
    paths = []
    for n in "abc":
        paths.append(tmp_path / f"{n}.txt")
        paths[-1].write_bytes(n.encode() * 500 + b"xyz" * 100)
    res = tmp_path / "res"
    cmd = [sys.executable, "-m", "lmzip", "bench", *map(str, paths), "--compressors", "gzip,bzip2",
           f"--ray={ray_head}", "--out", str(res), "--no-plots"]
    r = subprocess.run(cmd, env=ray_env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    rows = json.loads((res / "results.json").read_text())["rows"]
    assert [(x["compressor"], Path(x["file"]).name) for x in rows] == [
        (c, f"{n}.txt") for c in ("gzip", "bzip2") for n in "abc"]
    assert all(x["verified"] and x["original_bytes"] == 800 for x in rows)
    local = {(c, p.name): runner.measure(compressors.build(c), str(p), p.read_bytes())["compressed_bytes"]
             for c in ("gzip", "bzip2") for p in paths}
    assert {(x["compressor"], Path(x["file"]).name): x["compressed_bytes"] for x in rows} == local
    assert all(x["compress_node"] and x["decompress_node"] and x["compress_node"] != x["decompress_node"]
               for x in rows)
    assert len({x["compress_node"] for x in rows} | {x["decompress_node"] for x in rows}) == 2
    assert "Ray: 2 node(s); 6 of 6 rows decompressed on another node than compressed" in r.stderr


@pytest.mark.cluster
def test_the_blocks_of_a_file_are_tasks_on_both_nodes(ray_head, ray_env, tmp_path):
    """An lmzip compressor on a file of three blocks: each block coded on one node and checked on the other,
    the row the size of a local run in blocks of the same size."""
    from lmzip.api import LMCompressor

    data = (b"The blocks of a large file are tasks of their own. " * 60)[:2600]
    (tmp_path / "big.txt").write_bytes(data)
    res = tmp_path / "res"
    cmd = [sys.executable, "-m", "lmzip", "bench", str(tmp_path / "big.txt"), "--compressors", "lstm-small",
           "--block-size", "1K", f"--ray={ray_head}", "--out", str(res), "--no-plots"]
    r = subprocess.run(cmd, env=ray_env, capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    (row,) = json.loads((res / "results.json").read_text())["rows"]
    local = LMCompressor("lstm-small", threads=1, block_size=1024).compress(data)
    assert row["verified"] and row["blocks"] == 3 and row["compressed_bytes"] == len(local)
    assert row["settings"].endswith("blocks of 1,024 bytes") and cluster.crossed(row)
    assert len(set(row["compress_node"].split(",") + row["decompress_node"].split(","))) == 2
    assert "Ray: 2 node(s); 1 of 1 rows decompressed on another node than compressed" in r.stderr
