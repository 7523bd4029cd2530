"""Training mixes: the file's checks, batches drawn by weight, and validation per kind."""

from __future__ import annotations

import json
import lzma

import numpy as np
import pytest

from lmzip.errors import LmzipError
from lmzip.models import datamix
from lmzip.models.tokenizer import ByteTokenizer
from lmzip.models.train import TrainConfig, train
from tests.conftest import TEXT

MIX = """name = "tiny"
root = "data"
[[source]]
name = "prose"
train = ["prose.txt"]
valid = ["prose_valid.txt"]
weight = 3
[[source]]
name = "code"
train = ["code.txt.xz"]
weight = 1
"""
CODE = b"int main(void) { return 0; }\n" * 60


@pytest.fixture
def mix_file(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "prose.txt").write_bytes(TEXT * 4)
    (d / "prose_valid.txt").write_bytes(TEXT[:2000])
    (d / "code.txt.xz").write_bytes(lzma.compress(CODE))
    (tmp_path / "tiny.toml").write_text(MIX)
    return tmp_path / "tiny.toml"


def test_a_mix_resolves_paths_and_normalises_weights(mix_file):
    mixture = datamix.load_mixture(mix_file)
    assert mixture.name == "tiny" and [s.name for s in mixture.sources] == ["prose", "code"]
    assert [s.weight for s in mixture.sources] == [0.75, 0.25]
    assert mixture.train_files()[1].endswith("data/code.txt.xz") and len(mixture.valid_files()) == 1
    assert datamix.Mixture.from_dict(json.loads(json.dumps(mixture.to_dict()))) == mixture


@pytest.mark.parametrize("edit, message", [
    (('weight = 1\n', 'weight = 0\n'), "source 'code' needs a positive weight"),
    (('"code.txt.xz"', '"missing.txt"'), "source 'code':"),
    (('name = "code"', 'name = "prose"'), "two sources share a name"),
    (('[[source]]', '[[sauce]]'), "a mixture needs at least one [[source]]"),
    (('name = "tiny"', 'name = '), "not a mixture file"),
])
def test_a_bad_mix_is_one_clear_error(mix_file, edit, message):
    mix_file.write_text(MIX.replace(*edit))
    with pytest.raises(LmzipError, match=message.replace("[", r"\[")):
        datamix.load_mixture(mix_file)


def test_batches_draw_sources_by_weight_and_repeat_exactly(mix_file):
    data = datamix.load_tokens(datamix.load_mixture(mix_file), ByteTokenizer(), None)
    assert len(data.valid[0]) == len(TEXT[:2000]) and len(data.valid[1]) == len(CODE) // 50  # the last 2%
    b = datamix.MixtureBatches(data, batch=400, context=16, seed=0, bos=256, streams=False)
    x, y, reset = b.get(7)
    code = np.array([bytes(row.tolist()) in CODE for row in y])
    assert reset.all() and (x[:, 0] == 256).all() and (x[:, 1:] == y[:, :-1]).all()
    assert 0.18 < code.mean() < 0.32  # about a quarter of the windows are code
    x2, y2, _ = datamix.MixtureBatches(data, batch=400, context=16, seed=0, bos=256, streams=False).get(7)
    assert (x == x2).all() and (y == y2).all()
    s = datamix.MixtureBatches(data, batch=8, context=16, seed=0, bos=256, streams=True)
    _, y0, _ = s.get(0)
    x1, _, r1 = s.get(1)
    kept = ~r1
    assert kept.any() and (x1[kept, 0] == y0[kept, -1]).all()  # a stream carries on where it stopped


def test_training_on_a_mix_reports_every_kind(mix_file, tmp_path):
    mixture = datamix.load_mixture(mix_file)
    cfg = TrainConfig(model={"arch": "gpt", "vocab_size": 256, "n_layer": 1, "n_embd": 32, "n_head": 2,
                             "n_kv_head": 1, "context": 16},
                      train=mixture.train_files(), valid=mixture.valid_files(), out=str(tmp_path / "run"), steps=4,
                      batch=4, warmup=2, eval_every=2, ckpt_every=2, eval_tokens=256, mixture=mixture.to_dict())
    meta = json.loads((train(cfg, ByteTokenizer()) / "config.json").read_text())["training"]
    assert set(meta["valid_kinds"]) == {"prose", "code"} and meta["mixture"]["name"] == "tiny"
    kinds = meta["valid_kinds"]
    assert meta["valid_bpb"] == pytest.approx(0.75 * kinds["prose"] + 0.25 * kinds["code"])


def test_lmzip_train_takes_a_mixture_file_as_data(mix_file, tmp_path):
    from click.testing import CliRunner

    from lmzip.cli import main

    out = tmp_path / "run"
    args = ["train", "--data", str(mix_file), "--preset", "gpt-nano", "--tokenizer", "bytes", "--out", str(out),
            "--steps", "2", "--batch", "2", "--context", "16", "--eval-every", "2", "--eval-tokens", "64"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "model" / "config.json").read_text())["training"]
    assert set(meta["valid_kinds"]) == {"prose", "code"} and meta["data"][1].endswith("code.txt.xz")
    r = CliRunner().invoke(main, [*args, "--data", str(tmp_path)])
    assert r.exit_code == 1 and "a mixture file names its own files" in r.output
    r = CliRunner().invoke(main, ["train", "--help"])
    assert "mixture file" in r.output and "--mix" not in r.output  # the former name: hidden


def test_the_former_train_option_still_reads_a_mixture(mix_file, tmp_path):
    from click.testing import CliRunner

    from lmzip.cli import main

    args = ["train", "--mix", str(mix_file), "--data", str(tmp_path), "--out", str(tmp_path / "r")]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1 and "a mixture file names its own files" in r.output


@pytest.mark.parametrize("text, message", [
    ('source = ["x"]', "a mixture needs at least one"),
    ('root = 1\n[[source]]\nname = "a"\ntrain = ["a"]\nweight = 1', "root must be a path"),
    ('[[source]]\nname = "a"\ntrain = "a.txt"\nweight = 1', "train must be a list of file names"),
])
def test_a_mix_of_the_wrong_shape_is_one_clear_error(tmp_path, text, message):
    (tmp_path / "m.toml").write_text(text)
    with pytest.raises(LmzipError, match=message):
        datamix.load_mixture(tmp_path / "m.toml")


def test_resuming_with_another_mix_or_batch_is_refused(mix_file, tmp_path):
    mixture = datamix.load_mixture(mix_file)
    cfg = TrainConfig(model={"arch": "lstm", "vocab_size": 256, "n_layer": 1, "n_embd": 16, "context": 16},
                      train=mixture.train_files(), valid=mixture.valid_files(), out=str(tmp_path / "run"), steps=2,
                      batch=2, warmup=1, eval_every=2, ckpt_every=2, eval_tokens=64, mixture=mixture.to_dict())
    train(cfg, ByteTokenizer())
    other = dict(mixture.to_dict(), sources=mixture.to_dict()["sources"][:1])
    with pytest.raises(LmzipError, match="started with another training mixture"):
        train(TrainConfig(**{**cfg.__dict__, "steps": 4, "mixture": other}), ByteTokenizer())
    saved = json.loads((tmp_path / "run" / "train_config.json").read_text())
    saved["mix"] = saved.pop("mixture")  # a run started before the rename
    (tmp_path / "run" / "train_config.json").write_text(json.dumps(saved))
    with pytest.raises(LmzipError, match="started with another training mixture"):
        train(TrainConfig(**{**cfg.__dict__, "steps": 4, "mixture": other}), ByteTokenizer())
    with pytest.raises(LmzipError, match="another batch size or mixture"):
        train(TrainConfig(**{**cfg.__dict__, "steps": 4, "batch": 3}), ByteTokenizer())
