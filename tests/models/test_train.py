"""Training: a few steps on local text; resuming gives the very weights of an unbroken run."""

from __future__ import annotations

import json

import pytest
from safetensors.torch import load_file

from lmzip.models.checkpoint import load_model
from lmzip.models.tokenizer import ByteTokenizer
from lmzip.models.train import TrainConfig, lr_at, train
from tests.conftest import TEXT

MODELS = {
    "gpt": {"arch": "gpt", "vocab_size": 256, "n_layer": 1, "n_embd": 32, "n_head": 2, "n_kv_head": 1, "context": 16},
    "lstm": {"arch": "lstm", "vocab_size": 256, "n_layer": 1, "n_embd": 32, "context": 16},
}


def config(tmp_path, arch, out, steps):
    (tmp_path / "t.txt").write_bytes(TEXT * 4)
    return TrainConfig(model=MODELS[arch], train=[str(tmp_path / "t.txt")], valid=[], out=str(tmp_path / out),
                       steps=steps, batch=4, warmup=2, eval_every=3, ckpt_every=3, eval_tokens=256)


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
def test_resume_matches_an_unbroken_run(tmp_path, arch):
    straight = train(config(tmp_path, arch, "a", 6), ByteTokenizer())
    train(config(tmp_path, arch, "b", 3), ByteTokenizer())  # stops at step 3 with a checkpoint
    resumed = train(config(tmp_path, arch, "b", 6), ByteTokenizer())
    wa, wb = load_file(str(straight / "model.safetensors")), load_file(str(resumed / "model.safetensors"))
    assert wa.keys() == wb.keys()
    assert all((wa[k] == wb[k]).all() for k in wa)
    meta = json.loads((straight / "config.json").read_text())
    assert meta["training"]["steps"] == 6 and meta["training"]["valid_bpb"] > 0
    assert (tmp_path / "a" / "loss.png").stat().st_size > 1000
    assert load_model(straight).model_id.hex() == meta["id"]


def test_training_lowers_the_loss(tmp_path):
    out = train(config(tmp_path, "gpt", "c", 30), ByteTokenizer())
    hist = json.loads((tmp_path / "c" / "ckpt.json").read_text())["history"]
    vals = [h["valid_bpb"] for h in hist if "valid_bpb" in h]
    assert vals[-1] < vals[0] < 9
    assert out.name == "model"


def test_schedule_warms_up_then_decays():
    cfg = TrainConfig(model=MODELS["gpt"], train=[], valid=[], out="x", steps=100, warmup=10, lr=1.0)
    assert lr_at(0, cfg) == pytest.approx(0.1)
    assert lr_at(9, cfg) == pytest.approx(1.0)
    assert lr_at(99, cfg) == pytest.approx(0.1, abs=1e-3)
