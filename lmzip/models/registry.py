"""Names -> models: architecture presets (for training) and model folders (for coding).

Shipped models live in ``lmzip/weights/<name>/``; more folders can be added with the
``LMZIP_MODELS`` environment variable (paths separated by ``os.pathsep``); ``lmzip import`` writes to
the user's folder (``user_dir()``), which is searched too. Listing reads only
``config.json`` files, so it needs no torch.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lmzip.errors import LmzipError, ModelNotFound

SHIPPED = Path(__file__).resolve().parent.parent / "weights"
DEFAULT_MODEL = "gpt-wide"
# The first shipped pair (18 M CPU-trained tokens): still installed so that files written with them
# keep decoding, and still benchmarked by name; the default benchmark suite leaves them out.
LEGACY = ("gpt-small", "lstm-small")
# listing order of the shipped models: the default pair, the larger pair, then the legacy pair
ORDER = ("gpt-wide", "lstm-wide", "gpt-large", "lstm-large", "gpt-small", "lstm-small")


@dataclass(frozen=True)
class Preset:
    """An architecture and a tokenizer to train; pairs are matched in parameter count."""

    model: dict[str, Any]
    tokenizer: str  # "bytes" or "bpe<vocab>"


PRESETS: dict[str, Preset] = {
    "gpt-nano": Preset({"arch": "gpt", "vocab_size": 256, "n_layer": 2, "n_embd": 128, "n_head": 4,
                        "n_kv_head": 1, "context": 256}, "bytes"),
    "lstm-nano": Preset({"arch": "lstm", "vocab_size": 256, "n_layer": 2, "n_embd": 145, "context": 256}, "bytes"),
    "gpt-small": Preset({"arch": "gpt", "vocab_size": 4096, "n_layer": 4, "n_embd": 256, "n_head": 4,
                         "n_kv_head": 2, "context": 256}, "bpe4096"),
    "lstm-small": Preset({"arch": "lstm", "vocab_size": 4096, "n_layer": 2, "n_embd": 384, "context": 256}, "bpe4096"),
    # the equal-budget frontier's pick (benchmarks/frontier.py: wide2x384), and its matched LSTM
    "gpt-wide": Preset({"arch": "gpt", "vocab_size": 4096, "n_layer": 2, "n_embd": 384, "n_head": 6,
                        "n_kv_head": 2, "context": 256}, "bpe4096"),
    "lstm-wide": Preset({"arch": "lstm", "vocab_size": 4096, "n_layer": 2, "n_embd": 432, "context": 256}, "bpe4096"),
    # the larger pair (best ratio): 7.87 M and 7.86 M parameters
    "gpt-large": Preset({"arch": "gpt", "vocab_size": 4096, "n_layer": 4, "n_embd": 384, "n_head": 6,
                         "n_kv_head": 2, "context": 256}, "bpe4096"),
    "lstm-large": Preset({"arch": "lstm", "vocab_size": 4096, "n_layer": 2, "n_embd": 584, "context": 256},
                         "bpe4096"),
}


_SCRATCH: dict[tuple[str, int], Any] = {}


def scratch(name: str, seed: int):
    """A preset with seeded random weights (no training): the start of adaptive coding from scratch.

    The tokenizer is bytes for byte presets; a BPE preset borrows the installed model of the same
    name's tokenizer. The same seed gives the same weights and id on any machine (lmzip.models.seeded).
    """
    import torch

    from lmzip.models.checkpoint import from_predictor
    from lmzip.models.model import build_model, config_from_dict
    from lmzip.models.seeded import seeded_init
    from lmzip.models.tokenizer import ByteTokenizer

    if name not in PRESETS:
        raise LmzipError(f"unknown preset {name!r} for random weights (presets: {', '.join(PRESETS)})")
    if not 0 <= seed < 2**63:
        raise LmzipError("the seed must be 0 .. 2**63-1")
    key = (name, seed)
    if key not in _SCRATCH:
        p = PRESETS[name]
        tok = ByteTokenizer() if p.tokenizer == "bytes" else load(name).tokenizer
        with torch.random.fork_rng(devices=[]):
            model = seeded_init(build_model(config_from_dict(p.model)), seed)
        _SCRATCH[key] = from_predictor(model, tok, name)
        _SCRATCH[key].seed = seed
    return _SCRATCH[key]


def user_dir() -> Path:
    """The user's models folder: $XDG_DATA_HOME/lmzip/models (default ~/.local/share/lmzip/models)."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "lmzip" / "models"


def model_dirs() -> list[Path]:
    """Where model folders are looked for, first match wins: LMZIP_MODELS, shipped ones, the user's."""
    extra = [Path(p) for p in os.environ.get("LMZIP_MODELS", "").split(os.pathsep) if p]
    return extra + [SHIPPED, user_dir()]


def available() -> dict[str, tuple[Path, dict[str, Any]]]:
    """Every installed model: name -> (folder, its config.json)."""
    out: dict[str, tuple[Path, dict[str, Any]]] = {}
    for d in model_dirs():
        if not d.is_dir():
            continue
        for sub in sorted(d.iterdir()):
            cfg = sub / "config.json"
            if sub.name not in out and cfg.is_file():
                try:
                    out[sub.name] = (sub, json.loads(cfg.read_text()))
                except ValueError:
                    continue
    rank = {n: i for i, n in enumerate(ORDER)}
    return dict(sorted(out.items(), key=lambda kv: (rank.get(kv[0], len(ORDER)), kv[0])))


_CACHE: dict[Path, Any] = {}


def load(name_or_path: str | Path | None = None):
    """A LoadedModel from a model name, a model folder, or None for the default model."""
    from lmzip.models.checkpoint import load_model  # torch is imported only when a model is really needed

    key = str(name_or_path or DEFAULT_MODEL)
    p = Path(key)
    if p.is_dir() and (p / "config.json").is_file():
        path, name = p.resolve(), p.name
    elif key in available():
        path, name = available()[key][0].resolve(), key
    elif key in PRESETS:
        raise LmzipError(f"{key!r} is an untrained preset; train it first (lmzip train --preset {key})")
    else:
        names = ", ".join(available()) or "none installed"
        raise ModelNotFound(f"unknown model {key!r} (available: {names})")
    if path not in _CACHE:
        _CACHE[path] = load_model(path, name)
    return _CACHE[path]


def find_by_id(model_id: bytes, name: str, hint: str | Path | None = None, seed: int | None = None):
    """The model a file was written with, found by its id; a clear error names what is missing."""
    if seed is not None:  # random weights: rebuilt from the preset and the seed, checked by id
        m = scratch(name, seed)
        if m.model_id != model_id:
            raise ModelNotFound(f"the random weights of preset {name!r} with seed {seed} differ on this machine "
                                f"(id {m.id_hex}, file wants {model_id.hex()}): a different torch build?")
        return m
    if hint is not None:
        m = load(hint)
        if m.model_id == model_id:
            return m
        raise ModelNotFound(f"this file needs model {name!r} (id {model_id.hex()}), "
                            f"but {str(hint)!r} has id {m.id_hex}")
    models = available()
    order = ([name] if name in models else []) + [n for n in models if n != name]
    for n in order:
        if models[n][1].get("id") == model_id.hex():
            return load(n)
    raise ModelNotFound(f"this file needs model {name!r} (id {model_id.hex()}), which is not installed "
                        "here; put its folder in LMZIP_MODELS or pass it with -m")
