"""The models wing: what predicts the next token, and where it comes from.

``model`` holds the Transformer and the LSTM behind one ``Predictor`` interface (float, for training
and learning); ``qmodel`` the same two in exact integer arithmetic (what the coder uses);
``tokenizer`` bytes and BPE; ``checkpoint`` safetensors + JSON and model ids; ``registry`` shipped
models (``lmzip/weights/``), installed ones and presets; ``seeded`` random weights from a seed;
``train`` and ``data`` training on local files. Below it lies only ``lmzip.arith``.
"""

_EXPORTS = {"Predictor": "model", "build_model": "model", "Tokenizer": "tokenizer", "ByteTokenizer": "tokenizer",
            "LoadedModel": "checkpoint", "load_model": "checkpoint", "save_model": "checkpoint",
            "load": "registry", "exact_predictor": "qmodel", "train": "train"}


def __getattr__(name: str):
    """Import a wing's export on first use, so importing one module of the wing loads no more."""
    import importlib

    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
