"""Model configurations: the architecture a model folder's config.json describes (no torch needed)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class GPTConfig:
    """A pre-norm decoder-only Transformer: by default rotary positions, tied embeddings, LayerNorm,
    a 4x GELU MLP and no biases; the variant fields describe imported GPT-2 and Llama checkpoints."""

    vocab_size: int = 256  # coded symbols; the embedding has one more row, for BOS (unless ``bos`` is set)
    n_layer: int = 4
    n_embd: int = 256
    n_head: int = 4
    n_kv_head: int = 4  # < n_head gives grouped-query (1 = multi-query) attention
    context: int = 256  # the attention window, in tokens
    arch: str = field(default="gpt", init=False)
    # variants (config.json holds them only where they differ from these defaults: VARIANTS)
    norm: str = "layer"  # "layer" (LayerNorm with bias) or "rms" (RMSNorm)
    mlp: str = "gelu"  # "gelu" (erf), "gelu_tanh" (GPT-2's gelu_new) or "swiglu" (Llama)
    mlp_hidden: int = 0  # the MLP's width; 0: 4 * n_embd
    pos: str = "rope"  # "rope" or "learned" (absolute position embeddings ``wpe``, GPT-2)
    rope_base: float = 10000.0
    bias: bool = False  # biases on every linear layer (GPT-2)
    tied: bool = True  # the output layer is the embedding; else ``lm_head``
    norm_eps: float = 1e-5  # the float model's; the exact form ignores it (lmzip.arith.exact.QNormLinear)
    bos: int | None = None  # the id fed before each stream; None: vocab_size, an extra embedding row

    @property
    def hidden(self) -> int:
        """The MLP's width."""
        return self.mlp_hidden or 4 * self.n_embd


# defaults of the variant fields: left out of config_to_dict, so older models keep their config and id
VARIANTS = {"norm": "layer", "mlp": "gelu", "mlp_hidden": 0, "pos": "rope", "rope_base": 10000.0, "bias": False,
            "tied": True, "norm_eps": 1e-5, "bos": None}


@dataclass
class LSTMConfig:
    """A multi-layer LSTM with tied input/output embeddings."""

    vocab_size: int = 256
    n_layer: int = 2
    n_embd: int = 384
    context: int = 256  # the truncated-BPTT length used in training; coding is unbounded
    arch: str = field(default="lstm", init=False)


ModelConfig = GPTConfig | LSTMConfig


def config_from_dict(d: dict[str, Any]) -> ModelConfig:
    """Rebuild a config from its JSON form (the ``arch`` key picks the class)."""
    d = dict(d)
    arch = d.pop("arch")
    cls = {"gpt": GPTConfig, "lstm": LSTMConfig}.get(arch)
    if cls is None:
        raise ValueError(f"unknown architecture {arch!r}")
    return cls(**d)


def config_to_dict(cfg: ModelConfig) -> dict[str, Any]:
    """The JSON form of a config (variant fields only where they differ from the defaults)."""
    return {k: v for k, v in asdict(cfg).items() if k not in VARIANTS or VARIANTS[k] != v}
