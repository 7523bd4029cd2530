"""Imported Hugging Face checkpoints: the float model is the checkpoint, the exact one stays close,
the tokenizer codes every byte string with the checkpoint's ids, and bad inputs get clear errors."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
import torch

from lmzip.errors import LmzipError
from lmzip.models.checkpoint import load_model
from lmzip.models.model import VARIANTS, GPTConfig, config_from_dict, config_to_dict
from tests.hf_checkpoints import EOT, TEXT

pytest.importorskip("transformers")

KINDS = ("gpt2", "llama")


@pytest.fixture(scope="module")
def imported(hf_checkpoints, tmp_path_factory):
    """kind -> the lmzip model folder imported from the tiny checkpoint."""
    from lmzip.models.hf_import import import_checkpoint

    root = tmp_path_factory.mktemp("imported")
    for kind, path in hf_checkpoints.items():
        import_checkpoint(path, root / kind)
    return {kind: root / kind for kind in hf_checkpoints}


def _hf_logits(path, x: torch.Tensor) -> torch.Tensor:
    from transformers import AutoModelForCausalLM

    hf = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=torch.float32).eval()
    with torch.no_grad():
        return hf(input_ids=x).logits


@pytest.mark.parametrize("kind", KINDS)
def test_float_model_is_the_checkpoint(hf_checkpoints, kind):
    from lmzip.models.hf_import import read_checkpoint

    model, tok, got = read_checkpoint(hf_checkpoints[kind])
    assert got == kind
    eot = json.loads((hf_checkpoints[kind] / "config.json").read_text())["eos_token_id"]
    assert model.bos == eot and model.wte.weight.shape[0] == model.config.vocab_size  # no extra BOS row
    ids = torch.as_tensor(tok.encode(TEXT))[:127]
    x = torch.cat([torch.tensor([model.bos]), ids])[None]
    ref = _hf_logits(hf_checkpoints[kind], x)
    with torch.no_grad():
        assert (model(x) - ref).abs().max() < 1e-4  # the whole-sequence path
        st = model.start(1)
        steps = torch.stack([model.step(x[:, i], st)[0] for i in range(32)], 1)
    assert (steps - ref[:, :32]).abs().max() < 1e-4  # the step path (KV cache, positions)


@pytest.mark.parametrize("kind", KINDS)
def test_exact_model_is_close_to_the_float_one(imported, kind):
    lm = load_model(imported[kind])
    ids = torch.as_tensor(lm.tokenizer.encode(TEXT))[:127]
    x = torch.cat([torch.tensor([lm.predictor.bos]), ids])[None]
    with torch.no_grad():
        logp = torch.log_softmax(lm.predictor(x)[0].double(), -1)
    ex = lm.exact_for()
    assert ex.bos == lm.predictor.bos
    raw = ex.steps(x, ex.start(1))[0][0]
    counts = raw.double()
    p = (counts + 1) / (counts + 1).sum(-1, keepdim=True)  # what the coder codes with
    kl = float((logp.exp() * (logp - p.log())).sum(-1).mean())
    assert kl < 0.005, kl  # nats per token
    # steps() and step() agree: the same integers
    st = ex.start(1)
    one = torch.stack([ex.step(x[:, i], st)[0][0] for i in range(20)])
    assert torch.equal(one, raw[:20])


@pytest.mark.parametrize("kind", KINDS)
def test_compiled_and_reference_arithmetic_give_the_same_counts(imported, kind, monkeypatch):
    from lmzip.arith import exact
    from lmzip.models.qmodel import exact_predictor

    lm = load_model(imported[kind])
    x = torch.as_tensor(lm.tokenizer.encode(TEXT[:400]))[None, :100]
    fast = exact_predictor(lm.predictor)
    a = fast.steps(x, fast.start(1))[0]
    monkeypatch.setattr(exact, "FAST", False)  # the torch code every device runs
    ref = exact_predictor(lm.predictor)
    assert torch.equal(a, ref.steps(x, ref.start(1))[0])


def counts_digest(*folders: str) -> str:
    """sha256 of every count the exact models of ``folders`` give on the start of TEXT (run in a child too)."""
    import hashlib

    h = hashlib.sha256()
    for folder in folders:
        lm = load_model(folder)
        x = torch.as_tensor(lm.tokenizer.encode(TEXT))[None, :150]
        ex = lm.exact_for()
        h.update(ex.steps(x, ex.start(1))[0].to(torch.int64).numpy().tobytes())
    return h.hexdigest()


def test_counts_are_the_same_under_the_lowest_cpu_kernels(imported):
    """The exactness promise for the new operations: torch, oneDNN and MKL forced down to SSE4, one thread."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    folders = [str(imported[k]) for k in KINDS]
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default", ONEDNN_MAX_CPU_ISA="SSE41", MKL_ENABLE_INSTRUCTIONS="SSE4_2",
               OMP_NUM_THREADS="1", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    code = "import sys; from tests.models.test_hf_import import counts_digest; print(counts_digest(*sys.argv[1:]))"
    child = subprocess.run([sys.executable, "-c", code, *folders], env=env, capture_output=True, text=True,
                           check=True, cwd=env["PYTHONPATH"])
    assert child.stdout.strip().splitlines()[-1] == counts_digest(*folders)


def test_tokenizer_keeps_the_checkpoint_ids_and_codes_any_bytes(hf_checkpoints, imported):
    from transformers import AutoTokenizer

    lm = load_model(imported["gpt2"])
    hf = AutoTokenizer.from_pretrained(hf_checkpoints["gpt2"], local_files_only=True)
    ascii_text = TEXT.decode().encode("ascii", "ignore")
    assert lm.tokenizer.encode(ascii_text).tolist() == hf(ascii_text.decode())["input_ids"]
    rng = np.random.default_rng(5)
    for data in (rng.integers(0, 256, 3000, dtype=np.uint8).tobytes(), b"\xff\xfe\xc3(\x80" + TEXT, b"",
                 EOT.encode(), "ünïcödé 中文 🎉".encode()):
        assert lm.tokenizer.decode(lm.tokenizer.encode(data)) == data


def test_non_byte_level_tokenizer_is_refused():
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from lmzip.models.hf_tokenizer import convert

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator([TEXT.decode()], trainers.BpeTrainer(vocab_size=300, special_tokens=["[UNK]"],
                                                                 show_progress=False))
    with pytest.raises(LmzipError, match="cannot code every byte string"):
        convert(tok.to_str(), 300)


def test_checkpoint_errors(hf_checkpoints, tmp_path):
    from lmzip.models.hf_import import read_checkpoint

    bad = tmp_path / "bad"
    shutil.copytree(hf_checkpoints["gpt2"], bad)
    cfg = json.loads((bad / "config.json").read_text())
    (bad / "config.json").write_text(json.dumps(dict(cfg, model_type="bert")))
    with pytest.raises(LmzipError, match="model_type 'bert' is not supported"):
        read_checkpoint(bad)
    (bad / "config.json").write_text(json.dumps(cfg))
    (bad / "model.safetensors").unlink()
    with pytest.raises(LmzipError, match="no safetensors weights"):
        read_checkpoint(bad)
    with pytest.raises(LmzipError, match="not a folder"):
        read_checkpoint(bad / "config.json")
    with pytest.raises(LmzipError, match="tokenizer.json is missing"):
        (bad / "tokenizer.json").unlink()
        read_checkpoint(bad)


def test_variant_fields_leave_existing_configs_alone():
    d = config_to_dict(GPTConfig(vocab_size=4096, n_layer=2, n_embd=384, n_head=6, n_kv_head=2))
    assert not VARIANTS.keys() & d.keys()  # so old config.json files and model ids are unchanged
    llama = GPTConfig(norm="rms", mlp="swiglu", mlp_hidden=96, rope_base=5e5, tied=False, bos=3)
    assert config_from_dict(config_to_dict(llama)) == llama
    assert math.isclose(config_to_dict(llama)["rope_base"], 5e5)
