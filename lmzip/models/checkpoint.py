"""Models on disk: a folder with ``model.safetensors``, ``config.json`` and ``tokenizer.json``.

Never pickle: safetensors holds only tensors, so loading a model cannot run code. The model id is
a hash of everything that decides its predictions (weights, architecture, tokenizer).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from lmzip.errors import LmzipError
from lmzip.models.model import ModelConfig, Predictor, build_model, config_from_dict, config_to_dict
from lmzip.models.tokenizer import Tokenizer, tokenizer_from_json

_BUILDING = threading.Lock()  # exact_for's: one exact predictor per model, device and arithmetic

WEIGHTS, CONFIG, TOKENIZER = "model.safetensors", "config.json", "tokenizer.json"


@dataclass
class LoadedModel:
    """A predictor with its tokenizer, name, id and descriptive metadata."""

    name: str
    predictor: Predictor
    tokenizer: Tokenizer
    model_id: bytes  # 16 bytes
    meta: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    seed: int | None = None  # set for seeded random weights (registry.scratch), recorded in the header
    _exact: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def id_hex(self) -> str:
        return self.model_id.hex()

    def exact_for(self, device: str = "cpu", arith: int | None = None):
        """The predictor in exact integer arithmetic ``arith`` (lmzip.models.qmodel; default: what new
        files use), built once per device and arithmetic."""
        from lmzip.models.qmodel import ARITH, exact_predictor

        key = (device, arith or ARITH)
        with _BUILDING:  # groups in threads ask at once: one builds it
            if key not in self._exact:
                self._exact[key] = exact_predictor(self.predictor, *key)
        return self._exact[key]


def _storage_dtype(name: str, t: torch.Tensor) -> torch.dtype:
    """Matrices are stored as bf16 (half the bytes); norms and biases stay fp32."""
    return torch.bfloat16 if t.ndim == 2 else torch.float32


def compute_id(tensors: dict[str, torch.Tensor], cfg: ModelConfig, tok_json: str) -> bytes:
    """sha256 over the stored weights, the architecture and the tokenizer; first 16 bytes."""
    h = hashlib.sha256()
    h.update(json.dumps(config_to_dict(cfg), sort_keys=True).encode())
    h.update(hashlib.sha256(tok_json.encode()).digest())
    for k in sorted(tensors):
        t = tensors[k].contiguous()
        h.update(f"{k}|{t.dtype}|{tuple(t.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes())
    return h.digest()[:16]


def quantize_for_storage(model: Predictor) -> dict[str, torch.Tensor]:
    """The tensors as they will be stored (what the id and the codec see)."""
    return {k: v.detach().cpu().to(_storage_dtype(k, v)).contiguous() for k, v in model.state_dict().items()}


def save_model(model: Predictor, tok: Tokenizer, path: Path, meta: dict[str, Any] | None = None) -> bytes:
    """Write the model folder atomically enough (each file via a temporary) and return its id."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tensors = quantize_for_storage(model)
    mid = compute_id(tensors, model.config, tok.to_json())
    cfg = {
        "format": "lmzip-model",
        "version": 1,
        "id": mid.hex(),
        "model": config_to_dict(model.config),
        "params": model.num_params(),
        "tokenizer": tok.kind,
        **(meta or {}),
    }
    _atomic(path / TOKENIZER, tok.to_json().encode())
    _atomic(path / CONFIG, (json.dumps(cfg, indent=2) + "\n").encode())
    with tempfile.NamedTemporaryFile(dir=path, delete=False, suffix=".tmp") as f:
        tmp = f.name
    save_file(tensors, tmp)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path / WEIGHTS)
    return mid


def _atomic(p: Path, data: bytes) -> None:
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, p)


def read_config(path: Path) -> dict[str, Any]:
    """The model's config.json, without loading torch tensors."""
    try:
        return json.loads((Path(path) / CONFIG).read_text())
    except (OSError, ValueError) as e:
        raise LmzipError(f"{path}: not a model folder ({e})") from e


def load_model(path: Path, name: str | None = None) -> LoadedModel:
    """Load a model folder; the weights become fp32 for computing, the id is checked."""
    path = Path(path)
    cfg_json = read_config(path)
    try:
        cfg = config_from_dict(cfg_json["model"])
        tok_json = (path / TOKENIZER).read_text()
        tensors = load_file(str(path / WEIGHTS))
    except (OSError, KeyError, ValueError, TypeError) as e:
        raise LmzipError(f"{path}: cannot load model ({e})") from e
    mid = compute_id(tensors, cfg, tok_json)
    if cfg_json.get("id") not in (None, mid.hex()):
        raise LmzipError(f"{path}: weights do not match the id in config.json (corrupt model file)")
    model = build_model(cfg)
    model.load_state_dict({k: v.float() for k, v in tensors.items()})
    model.eval()
    meta = {k: v for k, v in cfg_json.items() if k not in ("model",)}
    return LoadedModel(name or path.name, model, tokenizer_from_json(tok_json), mid, meta, path)


def from_predictor(model: Predictor, tok: Tokenizer, name: str) -> LoadedModel:
    """Wrap an in-memory predictor exactly as if it had been saved and loaded (bf16 matrices)."""
    tensors = quantize_for_storage(model)
    fresh = build_model(model.config)
    fresh.load_state_dict({k: v.float() for k, v in tensors.items()})
    fresh.eval()
    mid = compute_id(tensors, model.config, tok.to_json())
    return LoadedModel(name, fresh, tok, mid, {"params": fresh.num_params(), "tokenizer": tok.kind})
