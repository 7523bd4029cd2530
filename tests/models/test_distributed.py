"""Data-parallel training under torchrun: rows split by rank, a 2-rank run matching a 1-rank one, and a
2-rank run resumed on one process (the checkpoint holds the global state); two separate processes agreeing
on one step count (pair_plan, benchmarks/gpu_train.py's pairs)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from safetensors.torch import load_file

from lmzip.cli.main import main
from lmzip.errors import LmzipError
from lmzip.models import distributed
from lmzip.models.checkpoint import load_model
from tests.conftest import TEXT

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("world, batch", [(1, 4), (2, 5), (3, 7), (4, 4)])
def test_rows_split_the_global_batch(world, batch):
    rows = [distributed.Ranks(r, world).rows(batch) for r in range(world)]
    assert [i for s in rows for i in range(batch)[s]] == list(range(batch))  # every row once, in order
    assert max(s.stop - s.start for s in rows) - min(s.stop - s.start for s in rows) <= 1


def test_one_process_without_torchrun(monkeypatch):
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(k, raising=False)
    r = distributed.setup("cpu", 1)
    assert (r.rank, r.world, r.main, r.device) == (0, 1, True, "cpu")
    state = (torch.ones(1, 3, 2),)
    assert r.gather_rows(state) is state and r.local_rows(state, 3)[0].shape == (1, 3, 2)


def test_a_batch_smaller_than_the_ranks_is_refused(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(LmzipError, match="--batch 2 is smaller than the 4 ranks"):
        distributed.setup("cpu", 2)


def test_ranks_without_torchrun_are_one_line(monkeypatch):
    for k in ("MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    with pytest.raises(LmzipError, match="cannot join the 2 ranks"):
        distributed.setup("cpu", 4)


PAIRS = {"gpt-wide": "lstm-wide", "lstm-wide": "gpt-wide", "gpt-large": "lstm-large", "lstm-large": "gpt-large"}


def test_a_pair_agrees_on_one_step_count(tmp_path):
    deadline = time.time() + 100
    steps: dict[str, int] = {}

    def plan(name: str, rate: float, delay: float) -> None:
        time.sleep(delay)
        steps[name] = distributed.pair_plan(name, PAIRS[name], rate, tmp_path, deadline, done=130, least=140,
                                            fill=0.97)

    threads = [threading.Thread(target=plan, args=x) for x in
               [("gpt-wide", 15.0, 0.0), ("lstm-wide", 12.0, 0.3), ("gpt-large", 10.0, 0.2), ("lstm-large", 11.0, 0.0)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert steps["gpt-wide"] == steps["lstm-wide"] != steps["gpt-large"] == steps["lstm-large"]
    # the slower model of each pair sets the pace: about 12 and 10 steps a second for ~100 s
    assert 1000 < steps["gpt-wide"] <= 130 + 12 * 100 and 850 < steps["gpt-large"] <= 130 + 10 * 100


def test_a_model_whose_partner_never_reports_plans_alone(tmp_path):
    deadline = time.time() + 50
    steps = distributed.pair_plan("gpt-wide", "lstm-wide", 4.0, tmp_path, deadline, done=130, least=140, fill=1.0,
                                  wait=0.2)
    assert 130 + 4 * 49 <= steps <= 130 + 4 * 50


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def train_args(tmp_path: Path, out: str, steps: int) -> list[str]:
    # an LSTM: its per-row stream state is what a change in the number of ranks must carry over;
    # batch 5 splits 3 + 2, so the ranks' unequal shares must still add up to the global mean
    return ["train", "--preset", "lstm-nano", "--tokenizer", "bytes", "--data", str(tmp_path / "t.txt"),
            "--out", str(tmp_path / out), "--steps", str(steps), "--batch", "5", "--context", "16",
            "--warmup", "2", "--eval-every", "3", "--eval-tokens", "128", "-q"]


def ckpt(run: Path) -> dict[str, torch.Tensor]:
    return load_file(str(run / "ckpt.safetensors"))


def assert_close(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    """The same trajectory up to the order of floating-point sums (the all-reduce adds the ranks' parts):
    in float32 the weights agree to ~1e-6, but bf16 autocast (on CPUs with avx512_bf16) rounds the two
    shapes of batch apart, and AdamW's first steps move a weight by ~lr (1.5e-3) whatever the size of its
    gradient, so a gradient near zero that changes sign moves it ~2 lr apart: hence 4e-3."""
    assert a.keys() == b.keys()
    for k in a:
        if not k.startswith("opt."):  # the weights and the LSTM's stream state
            assert torch.allclose(a[k], b[k], rtol=0, atol=4e-3), (k, (a[k] - b[k]).abs().max())


def test_torchrun_two_ranks_then_resume_on_one(tmp_path):
    (tmp_path / "t.txt").write_bytes(TEXT * 4)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "OMP_NUM_THREADS": "1", "GLOO_SOCKET_IFNAME": "lo"}  # gloo on loopback only
    env = {k: v for k, v in env.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2",
           "--rdzv-backend=c10d", f"--rdzv-endpoint=127.0.0.1:{free_port()}", "-m", "lmzip",
           *train_args(tmp_path, "two", 3)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    # the same run on one process (in this one): the same global batches, so the same weights
    assert CliRunner().invoke(main, train_args(tmp_path, "one", 3)).exit_code == 0
    assert_close(ckpt(tmp_path / "two"), ckpt(tmp_path / "one"))
    h2, h1 = (json.loads((tmp_path / d / "ckpt.json").read_text()) for d in ("two", "one"))
    assert h2["batches"] == h1["batches"] and h2["step"] == 3
    assert h2["history"][0]["loss"] == pytest.approx(h1["history"][0]["loss"], rel=1e-3)
    assert h2["history"][0]["valid_bpb"] == pytest.approx(h1["history"][0]["valid_bpb"], rel=1e-3)
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == [
        "ckpt.json", "ckpt.safetensors", "loss.png", "model", "tokenizer.json", "train_config.json"]
    # the 2-rank checkpoint resumes on one process, and goes on as the 1-process run does
    for run in ("two", "one"):
        res = CliRunner().invoke(main, train_args(tmp_path, run, 5))
        assert res.exit_code == 0, res.output
    assert_close(ckpt(tmp_path / "two"), ckpt(tmp_path / "one"))
    meta = json.loads((tmp_path / "two" / "model" / "config.json").read_text())
    assert meta["training"]["steps"] == 5 and load_model(tmp_path / "two" / "model").id_hex == meta["id"]
