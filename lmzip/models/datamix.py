"""Training mixtures: named sources of text, each with a sampling weight and held-out validation files.

A mixture is a small TOML file (``corpora/mixes/all-kinds.toml``)::

    name = "all-kinds"
    root = "../../../shared/corpora/train"    # relative to the mixture file
    [[source]]
    name = "ja"
    train = ["mixed/ja_train.txt.xz"]          # .xz files are read unpacked
    valid = ["mixed/ja_valid.txt.xz"]          # optional: else the last 2% of the source's tokens
    weight = 0.09                              # share of the training windows

Training draws each window's source by weight, then a random crop of it (an LSTM's stream keeps its
source until it restarts), so a small source is not drowned by a large one, and validation reports
bits per byte for every kind apart: the figure that says what a model knows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tomllib

from lmzip.errors import LmzipError
from lmzip.models.data import chunk_doc, read_bytes, tokenize_files


@dataclass(frozen=True)
class Source:
    """One kind of text: its training files, its validation files and its share of the windows."""

    name: str
    train: list[str]
    valid: list[str]
    weight: float


@dataclass(frozen=True)
class Mixture:
    """Sources with weights that sum to 1 (as written in a training run's record)."""

    name: str
    sources: list[Source]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in the run's config and the model's training record."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Mixture:
        """Rebuild a mixture from its JSON form."""
        return cls(d["name"], [Source(**s) for s in d["sources"]])

    def train_files(self) -> list[str]:
        """Every training file, in source order."""
        return [f for s in self.sources for f in s.train]

    def valid_files(self) -> list[str]:
        """Every validation file, in source order."""
        return [f for s in self.sources for f in s.valid]


def load_mixture(path: str | Path, root: str | Path | None = None) -> Mixture:
    """Read and check a mixture file; paths resolve against ``root`` (default: the file's own ``root``)."""
    path = Path(path)
    try:
        d = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise LmzipError(f"{path}: {e.strerror or e}") from e
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise LmzipError(f"{path}: not a mixture file ({e})") from e
    if not isinstance(d.get("root", "."), str):
        raise LmzipError(f"{path}: root must be a path (a string)")
    base = Path(root) if root is not None else path.parent / d.get("root", ".")
    raw = d.get("source")
    if not isinstance(raw, list) or not raw or not all(isinstance(s, dict) for s in raw):
        raise LmzipError(f"{path}: a mixture needs at least one [[source]]")
    sources, total = [], 0.0
    for i, s in enumerate(raw):
        name = str(s.get("name", f"source{i}"))
        for k in ("train", "valid"):
            if not isinstance(s.get(k, []), list) or not all(isinstance(f, str) for f in s.get(k, [])):
                raise LmzipError(f"{path}: source {name!r}: {k} must be a list of file names")
        weight = s.get("weight")
        if not isinstance(weight, int | float) or not weight > 0 or not math.isfinite(weight):
            raise LmzipError(f"{path}: source {name!r} needs a positive weight")
        if not s.get("train"):
            raise LmzipError(f"{path}: source {name!r} names no train files")
        files = {k: [str(base / f) for f in s.get(k, [])] for k in ("train", "valid")}
        for f in files["train"] + files["valid"]:
            if not Path(f).is_file():
                raise LmzipError(f"{path}: source {name!r}: {f}: no such file")
        sources.append(Source(name, files["train"], files["valid"], float(weight)))
        total += weight
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise LmzipError(f"{path}: two sources share a name")
    return Mixture(d.get("name", path.stem), [Source(s.name, s.train, s.valid, s.weight / total) for s in sources])


def sample_docs(mixture: Mixture, sample_bytes: int) -> Iterator[bytes]:
    """An even sample of each source, ``weight * sample_bytes`` bytes of it (to learn a tokenizer on)."""
    for s in mixture.sources:
        per_file = max(1, int(sample_bytes * s.weight) // len(s.train))
        for f in s.train:
            pieces = chunk_doc(read_bytes(Path(f)), 1 << 16)
            yield from pieces[:: max(1, len(pieces) * (1 << 16) // per_file)]


@dataclass
class MixtureTokens:
    """Every source's tokens back to back (``offsets``), their validation tokens and weights."""

    names: list[str]
    tokens: np.ndarray
    offsets: np.ndarray  # [S + 1]
    valid: list[np.ndarray]
    weights: np.ndarray


def load_tokens(mixture: Mixture, tok, cache: Path | None) -> MixtureTokens:
    """Tokenize each source (cached) and split off its validation tokens."""
    parts, valid = [], []
    for s in mixture.sources:
        t = tokenize_files([Path(f) for f in s.train], tok, cache)
        if s.valid:
            v = tokenize_files([Path(f) for f in s.valid], tok, cache)
        else:
            cut = len(t) - max(len(t) // 50, 1)
            t, v = t[:cut], t[cut:]
        parts.append(t)
        valid.append(v)
    offsets = np.cumsum([0] + [len(p) for p in parts])
    return MixtureTokens([s.name for s in mixture.sources], np.concatenate(parts), offsets, valid,
                     np.array([s.weight for s in mixture.sources]))


class MixtureBatches:
    """Deterministic batches over a mixture: each row's source drawn by weight, then as train.Batches."""

    def __init__(self, data: MixtureTokens, batch: int, context: int, seed: int, bos: int, streams: bool):
        self.data, self.B, self.T, self.seed, self.bos, self.streams = data, batch, context, seed, bos, streams
        if any(n <= context + 2 for n in np.diff(data.offsets)):
            raise LmzipError("a source of the mixture is shorter than the context")
        self.src = np.zeros(batch, dtype=np.int64)
        self.pos = np.zeros(batch, dtype=np.int64)  # stream positions in the joined tokens (LSTM)
        self.fresh = np.ones(batch, dtype=bool)

    def _draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` sources by weight and a start in each that leaves a whole window (and one before it)."""
        src = rng.choice(len(self.data.weights), size=n, p=self.data.weights)
        lo, hi = self.data.offsets[src], self.data.offsets[src + 1]
        return src, lo + 1 + (rng.random(n) * (hi - lo - self.T - 2)).astype(np.int64)

    def get(self, step: int):
        """(x, y, reset) for a step; x starts with BOS wherever a crop or a stream starts."""
        import torch

        rng = np.random.default_rng([self.seed, step])
        if not self.streams:
            _, starts = self._draw(rng, self.B)
            reset = np.ones(self.B, dtype=bool)
        else:
            end = self.data.offsets[self.src + 1]
            restart = self.fresh | (self.pos + self.T >= end) | (rng.random(self.B) < 1 / 16)
            self.src[restart], self.pos[restart] = self._draw(rng, int(restart.sum()))
            starts, reset = self.pos.copy(), restart
            self.pos += self.T
            self.fresh[:] = False
        y = self.data.tokens[starts[:, None] + np.arange(self.T)[None, :]].astype(np.int64)
        x = np.empty_like(y)
        x[:, 1:] = y[:, :-1]
        x[:, 0] = np.where(reset, self.bos, self.data.tokens[starts - 1])
        return torch.from_numpy(x), torch.from_numpy(y), reset

    def state_dict(self) -> dict[str, Any]:
        return {"src": self.src.tolist(), "pos": self.pos.tolist(), "fresh": self.fresh.tolist()}

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Resume; a checkpoint of another batch size or mixture is refused in one line, not run on."""
        n = len(self.data.weights)
        if len(d["src"]) != self.B or any(not 0 <= s < n for s in d["src"]) or \
                any(not 0 <= p < len(self.data.tokens) for p in d["pos"]):
            raise LmzipError("the checkpoint was written for another batch size or mixture: resume with the same ones")
        self.src[:], self.pos[:], self.fresh[:] = d["src"], d["pos"], d["fresh"]


def evaluate_kinds(data: MixtureTokens, bpb: Callable[[np.ndarray], float]) -> tuple[float, dict[str, float]]:
    """Validation bits per byte of every kind, and their mean weighted as the mixture draws them."""
    kinds = {name: bpb(v) for name, v in zip(data.names, data.valid, strict=True)}
    return float(sum(w * kinds[n] for n, w in zip(data.names, data.weights, strict=True))), kinds
