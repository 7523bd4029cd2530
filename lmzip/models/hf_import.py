"""Bring your own model: a local Hugging Face causal-LM checkpoint as an lmzip model folder.

GPT-2 and Llama-family checkpoints (``config.json``, safetensors weights, a byte-level BPE
``tokenizer.json``) map onto lmzip's Transformer (lmzip.models.model.GPTConfig's variant fields), so
they code in the same exact integer arithmetic as the shipped models: every count is the same on
every machine. Only local files are read (safetensors: no code runs), and nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import torch

from lmzip.errors import LmzipError

SUPPORTED = ("gpt2", "llama")
MAX_CONTEXT = 1024  # default cap on the attention window (the KV caches grow with it)


def offline() -> None:
    """Make every Hugging Face library refuse the network for the rest of the process."""
    for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[k] = "1"


def _read_json(p: Path) -> dict[str, Any]:
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise LmzipError(f"{p}: cannot read ({e})") from e
    if not isinstance(d, dict):
        raise LmzipError(f"{p}: not a JSON object")
    return d


def load_weights(path: Path) -> dict[str, torch.Tensor]:
    """Every tensor of the checkpoint's safetensors file(s), sharded or not, as float32."""
    from safetensors.torch import load_file

    index = path / "model.safetensors.index.json"
    if index.is_file():
        files = sorted(set(_read_json(index).get("weight_map", {}).values()))
    elif (path / "model.safetensors").is_file():
        files = ["model.safetensors"]
    else:
        found = "pytorch_model.bin (pickle: not read)" if (path / "pytorch_model.bin").exists() else "none"
        raise LmzipError(f"{path}: no safetensors weights (model.safetensors or its index; found: {found})")
    out: dict[str, torch.Tensor] = {}
    for f in files:
        try:
            out.update(load_file(str(path / f)))
        except (OSError, ValueError, RuntimeError) as e:
            raise LmzipError(f"{path / f}: cannot read weights ({e})") from e
    return {k: v.float() for k, v in out.items()}


def _bos(hf: dict[str, Any]) -> int:
    """The checkpoint's start-of-stream id: bos_token_id, else eos_token_id (GPT-2 uses one for both)."""
    for key in ("bos_token_id", "eos_token_id"):
        v = hf.get(key)
        v = v[0] if isinstance(v, list) and v else v
        if isinstance(v, int):
            return v
    raise LmzipError("config.json names no bos_token_id or eos_token_id to start a stream with")


def _rope_base(hf: dict[str, Any]) -> float:
    """rope_theta (transformers 5 keeps it in rope_parameters); scaled rotary variants are refused."""
    rp = hf.get("rope_parameters") or hf.get("rope_scaling") or {}
    kind = rp.get("rope_type", rp.get("type", "default"))
    if kind != "default":
        raise LmzipError(f"rotary scaling {kind!r} is not supported (only plain RoPE)")
    return float(rp.get("rope_theta", hf.get("rope_theta", 10000.0)))


def _need(hf: dict[str, Any], *keys: str) -> list[int]:
    try:
        return [int(hf[k]) for k in keys]
    except (KeyError, TypeError, ValueError) as e:
        raise LmzipError(f"config.json lacks a usable {e}") from e


def _gpt2(hf: dict[str, Any], w: dict[str, torch.Tensor], ctx: int | None):
    from lmzip.models.config import GPTConfig

    V, L, C, H, P = _need(hf, "vocab_size", "n_layer", "n_embd", "n_head", "n_positions")
    act = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu"}.get(hf.get("activation_function"))
    if act is None:
        raise LmzipError(f"activation {hf.get('activation_function')!r} is not supported")
    if hf.get("scale_attn_by_inverse_layer_idx") or hf.get("scale_attn_weights") is False:
        raise LmzipError("GPT-2 attention scaling variants are not supported")
    w = {k.removeprefix("transformer."): v for k, v in w.items()}
    tied = "lm_head.weight" not in w or torch.equal(w["lm_head.weight"], w["wte.weight"])
    cfg = GPTConfig(vocab_size=V, n_layer=L, n_embd=C, n_head=H, n_kv_head=H, context=min(ctx or P, P), norm="layer",
                    mlp=act, mlp_hidden=int(hf.get("n_inner") or 4 * C), pos="learned", bias=True, tied=tied,
                    norm_eps=float(hf.get("layer_norm_epsilon", 1e-5)), bos=_bos(hf))
    sd = {"wte.weight": w["wte.weight"][:V], "wpe.weight": w["wpe.weight"][: cfg.context],
          "ln_f.weight": w["ln_f.weight"], "ln_f.bias": w["ln_f.bias"]}
    if not tied:
        sd["lm_head.weight"] = w["lm_head.weight"][:V]
    for i in range(L):
        h, b = f"h.{i}.", f"blocks.{i}."
        for src, dst in (("ln_1", "ln1"), ("ln_2", "ln2")):
            sd[b + dst + ".weight"], sd[b + dst + ".bias"] = w[h + src + ".weight"], w[h + src + ".bias"]
        # Conv1D stores [in, out]: nn.Linear's transpose
        for src, dst in (("attn.c_attn", "attn.qkv"), ("attn.c_proj", "attn.proj"), ("mlp.c_fc", "mlp.up"),
                         ("mlp.c_proj", "mlp.down")):
            sd[b + dst + ".weight"], sd[b + dst + ".bias"] = w[h + src + ".weight"].T, w[h + src + ".bias"]
    return cfg, sd


def _llama(hf: dict[str, Any], w: dict[str, torch.Tensor], ctx: int | None):
    from lmzip.models.config import GPTConfig

    V, L, C, H, F = _need(hf, "vocab_size", "num_hidden_layers", "hidden_size", "num_attention_heads",
                          "intermediate_size")
    Hkv = int(hf.get("num_key_value_heads") or H)
    if hf.get("hidden_act", "silu") != "silu":
        raise LmzipError(f"activation {hf.get('hidden_act')!r} is not supported (Llama: silu)")
    if int(hf.get("head_dim") or C // H) * H != C:
        raise LmzipError("a head_dim other than hidden_size / num_attention_heads is not supported")
    if hf.get("attention_bias") or hf.get("mlp_bias"):
        raise LmzipError("Llama checkpoints with biases are not supported")
    P = int(hf.get("max_position_embeddings") or MAX_CONTEXT)
    w = {k.removeprefix("model."): v for k, v in w.items()}
    tied = "lm_head.weight" not in w or bool(hf.get("tie_word_embeddings"))
    cfg = GPTConfig(vocab_size=V, n_layer=L, n_embd=C, n_head=H, n_kv_head=Hkv, context=min(ctx or MAX_CONTEXT, P),
                    norm="rms", mlp="swiglu", mlp_hidden=F, pos="rope", rope_base=_rope_base(hf), bias=False,
                    tied=tied, norm_eps=float(hf.get("rms_norm_eps", 1e-6)), bos=_bos(hf))
    sd = {"wte.weight": w["embed_tokens.weight"][:V], "ln_f.weight": w["norm.weight"]}
    if not tied:
        sd["lm_head.weight"] = w["lm_head.weight"][:V]
    for i in range(L):
        h, b = f"layers.{i}.", f"blocks.{i}."
        a, m = h + "self_attn.", h + "mlp."
        sd[b + "ln1.weight"] = w[h + "input_layernorm.weight"]
        sd[b + "ln2.weight"] = w[h + "post_attention_layernorm.weight"]
        # HF's rotate_half pairs dim j with j + hd/2, as lmzip's apply_rotary does: no permutation
        sd[b + "attn.qkv.weight"] = torch.cat([w[a + "q_proj.weight"], w[a + "k_proj.weight"], w[a + "v_proj.weight"]])
        sd[b + "attn.proj.weight"] = w[a + "o_proj.weight"]
        for p in ("gate", "up", "down"):
            sd[f"{b}mlp.{p}.weight"] = w[f"{m}{p}_proj.weight"]
    return cfg, sd


def read_checkpoint(path: Path, context: int | None = None):
    """(GPT predictor with the checkpoint's weights, lmzip tokenizer, model_type) of a local checkpoint."""
    from lmzip.models.hf_tokenizer import convert
    from lmzip.models.model import GPT

    offline()
    path = Path(path)
    if not path.is_dir():
        raise LmzipError(f"{path}: not a folder (expected a Hugging Face checkpoint folder)")
    for f in ("config.json", "tokenizer.json"):
        if not (path / f).is_file():
            raise LmzipError(f"{path}: not a Hugging Face checkpoint ({f} is missing)")
    hf = _read_json(path / "config.json")
    kind = hf.get("model_type")
    if kind not in SUPPORTED:
        raise LmzipError(f"{path}: model_type {kind!r} is not supported (supported: {', '.join(SUPPORTED)})")
    if context is not None and context < 2:
        raise LmzipError("the context must be at least 2 tokens")
    weights = load_weights(path)
    try:
        cfg, sd = (_gpt2 if kind == "gpt2" else _llama)(hf, weights, context)
    except KeyError as e:
        raise LmzipError(f"{path}: the weights lack {e} (not a {kind} causal-LM checkpoint?)") from e
    if not 0 <= cfg.bos < cfg.vocab_size:
        raise LmzipError(f"the start-of-stream id {cfg.bos} is not below the vocabulary size {cfg.vocab_size}")
    tok = convert((path / "tokenizer.json").read_text(), cfg.vocab_size)
    model = GPT(cfg)
    try:
        model.load_state_dict(sd)
    except RuntimeError as e:
        raise LmzipError(f"{path}: the weights do not fit config.json ({str(e).splitlines()[0]})") from e
    return model.eval(), tok, kind


def _is_model_folder(folder: Path) -> bool:
    """Whether ``folder`` is an lmzip model folder (its config.json says so)."""
    try:
        return json.loads((folder / "config.json").read_text()).get("format") == "lmzip-model"
    except (OSError, ValueError, AttributeError):
        return False


def import_checkpoint(path: Path, out: Path, context: int | None = None, replace: bool = False):
    """Write the lmzip model folder ``out`` for the checkpoint at ``path`` (an existing ``out`` only with
    ``replace``, and only once the checkpoint has been read); returns (model id, the predictor, model_type)."""
    from lmzip.models.checkpoint import save_model

    out, src = Path(out), Path(path).resolve()
    dest = out.resolve()
    if dest == src or src in dest.parents or dest in src.parents:  # never write over the checkpoint itself
        raise LmzipError(f"{out}: the model would overwrite the checkpoint it is made from; choose another --out")
    if out.exists() and not replace:
        raise LmzipError(f"{out} exists (use -f to replace it)")
    if out.exists() and not _is_model_folder(out):  # -f replaces an lmzip model, never other files
        raise LmzipError(f"{out} exists and is not an lmzip model folder; -f replaces only those")
    model, tok, kind = read_checkpoint(path, context)
    if out.exists():
        shutil.rmtree(out)
    meta = {"imported": {"from": kind, "path": str(Path(path).resolve())}}
    return save_model(model, tok, out, meta), model, kind
