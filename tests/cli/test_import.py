"""`lmzip import` through the real CLI: import, list, compress and decompress exactly, at the
checkpoint's own cross-entropy; clear one-line errors for what cannot be imported."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

from lmzip.cli.main import main
from lmzip.coding import format as fmt
from tests.hf_checkpoints import TEXT, hf_cross_entropy_bits

pytest.importorskip("transformers")

SEGMENT = 128  # one window per segment (BOS + 127 inputs): no re-priming, so HF's plain forward is comparable


@pytest.fixture()
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the user's models folder, isolated
    monkeypatch.delenv("LMZIP_MODELS", raising=False)
    monkeypatch.chdir(tmp_path)

    def invoke(*args, input=None):
        return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)

    return invoke


def _one_line_error(r, text: str) -> None:
    assert r.exit_code == 1, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lmzip: ") and text in lines[0], r.stderr


@pytest.mark.parametrize("kind", ["gpt2", "llama"])
def test_import_list_and_round_trip_at_the_checkpoints_cross_entropy(run, hf_checkpoints, tmp_path, kind):
    r = run("import", hf_checkpoints[kind], "--name", f"tiny-{kind}")
    assert r.exit_code == 0, r.output
    folder = tmp_path / "data" / "lmzip" / "models" / f"tiny-{kind}"
    cfg = json.loads((folder / "config.json").read_text())
    listed = {m["name"]: m for m in json.loads(run("models", "--json").stdout)}
    assert listed[f"tiny-{kind}"]["arch"] == kind and listed[f"tiny-{kind}"]["id"] == cfg["id"]

    (tmp_path / "t.txt").write_bytes(TEXT)
    r = run("compress", "-m", f"tiny-{kind}", "--segment", SEGMENT, "-j", "1", "t.txt")
    assert r.exit_code == 0, r.output
    blob = (tmp_path / "t.txt.lmz").read_bytes()
    head = fmt.parse_header(blob)
    assert head.model_name == f"tiny-{kind}" and head.model_id.hex() == cfg["id"]
    (tmp_path / "t.txt").rename(tmp_path / "orig.txt")
    r = run("decompress", "-j", "1", "t.txt.lmz")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "t.txt").read_bytes() == TEXT

    from lmzip.models.registry import load

    lm = load(f"tiny-{kind}")
    ce = hf_cross_entropy_bits(hf_checkpoints[kind], lm.tokenizer.encode(TEXT), lm.predictor.bos, SEGMENT)
    coded = 8 * (len(blob) - head.size)
    assert abs(coded / ce - 1) < 0.01, (coded, ce)


def test_any_bytes_round_trip_with_mix(run, hf_checkpoints, tmp_path):
    assert run("import", hf_checkpoints["gpt2"], "--name", "g").exit_code == 0
    data = np.random.default_rng(3).integers(0, 256, 300, dtype=np.uint8).tobytes() + b"\xc3(\xff" + TEXT[:400]
    (tmp_path / "b.bin").write_bytes(data)
    r = run("compress", "-m", "g", "--mix", "--segment", SEGMENT, "-j", "1", "-c", "b.bin")
    assert r.exit_code == 0, r.output
    assert fmt.parse_header(r.stdout_bytes).mix
    r = run("decompress", "-c", "-j", "1", input=r.stdout_bytes)
    assert r.exit_code == 0 and r.stdout_bytes == data


def test_adapt_is_refused_in_one_line(run, hf_checkpoints, tmp_path):
    assert run("import", hf_checkpoints["llama"], "--name", "l").exit_code == 0
    (tmp_path / "t.txt").write_bytes(TEXT)
    _one_line_error(run("compress", "-m", "l", "--adapt", "t.txt"), "--adapt supports lmzip's own")
    assert not (tmp_path / "t.txt.lmz").exists()


def test_existing_model_is_kept_without_force(run, hf_checkpoints, tmp_path):
    out = tmp_path / "mine"
    assert run("import", hf_checkpoints["gpt2"], "--out", out, "--name", "m").exit_code == 0
    before = (out / "m" / "config.json").read_text()
    _one_line_error(run("import", hf_checkpoints["llama"], "--out", out, "--name", "m"), "exists (use -f")
    assert (out / "m" / "config.json").read_text() == before
    assert run("import", hf_checkpoints["llama"], "--out", out, "--name", "m", "-f").exit_code == 0
    assert json.loads((out / "m" / "config.json").read_text())["imported"]["from"] == "llama"


def _no_byte_symbols(tok_json: str) -> str:
    d = json.loads(tok_json)
    d["model"]["vocab"].pop("Ā")  # the byte 0x00's symbol
    return json.dumps(d)


@pytest.mark.parametrize("case, message", [
    ("empty", "tokenizer.json is missing"),
    ("file", "not a folder"),
    ("bert", "model_type 'bert' is not supported"),
    ("no-weights", "no safetensors weights"),
    ("no-tokenizer", "tokenizer.json is missing"),
    ("no-byte-symbols", "cannot code every byte string"),
    ("shipped-name", "shipped model's name"),
])
def test_what_cannot_be_imported_gets_one_line(run, hf_checkpoints, tmp_path, case, message):
    src = tmp_path / "ckpt"
    shutil.copytree(hf_checkpoints["gpt2"], src)
    name = "x"
    if case == "empty":
        src = tmp_path / "empty"
        src.mkdir()
        (src / "config.json").write_text("{}")
    elif case == "file":
        src = src / "config.json"
    elif case == "bert":
        (src / "config.json").write_text(json.dumps(dict(json.loads((src / "config.json").read_text()),
                                                         model_type="bert")))
    elif case == "no-weights":
        (src / "model.safetensors").unlink()
    elif case == "no-tokenizer":
        (src / "tokenizer.json").unlink()
    elif case == "no-byte-symbols":
        (src / "tokenizer.json").write_text(_no_byte_symbols((src / "tokenizer.json").read_text()))
    else:
        name = "gpt-wide"
    _one_line_error(run("import", src, "--name", name), message)
    assert not (tmp_path / "data" / "lmzip" / "models" / name).exists()


def test_import_never_writes_over_the_checkpoint_or_other_files(run, hf_checkpoints, tmp_path):
    ckpt = tmp_path / "ckpt"
    shutil.copytree(hf_checkpoints["gpt2"], ckpt)
    before = sorted(p.name for p in ckpt.iterdir())
    _one_line_error(run("import", ckpt, "--out", tmp_path, "-f"), "would overwrite the checkpoint")
    _one_line_error(run("import", ckpt, "--out", ckpt, "-f"), "would overwrite the checkpoint")
    assert sorted(p.name for p in ckpt.iterdir()) == before
    (tmp_path / "models" / "docs").mkdir(parents=True)
    (tmp_path / "models" / "docs" / "keep.txt").write_text("mine")
    _one_line_error(run("import", ckpt, "--out", tmp_path / "models", "--name", "docs", "-f"),
                    "is not an lmzip model folder")
    assert (tmp_path / "models" / "docs" / "keep.txt").read_text() == "mine"
    _one_line_error(run("import", ckpt, "--name", "cm"), "names counting")
