"""See the compression: what each token really costs, which spans one model codes cheaper than
another, and how the cost of a token falls with the context the model has seen."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lmzip.coding import codec, transform
from lmzip.coding.coder import coded_bits
from lmzip.coding.settings import Settings
from lmzip.models.checkpoint import LoadedModel


@dataclass
class Explanation:
    """Per-token costs of one model on one input, in the file's token order."""

    model: str
    pieces: list[bytes]  # each token's bytes; b"".join(pieces) is the input
    bits: np.ndarray  # what the coder pays for each token (quantized probabilities), float64
    position: np.ndarray  # the token's index within its segment (how much context it had)
    top: list[list[tuple[bytes, float]]]  # the model's top predictions for each token (may be empty)

    @property
    def n_bytes(self) -> int:
        return sum(len(p) for p in self.pieces)

    @property
    def bits_per_byte(self) -> float:
        return float(self.bits.sum()) / max(1, self.n_bytes)

    def byte_bits(self) -> np.ndarray:
        """Each token's cost spread evenly over its bytes (to compare models with other tokenizers)."""
        out = np.zeros(self.n_bytes)
        i = 0
        for piece, b in zip(self.pieces, self.bits, strict=True):
            out[i : i + len(piece)] = b / len(piece)
            i += len(piece)
        return out


def explain(data: bytes, model: LoadedModel, segment: int | None = None, top_k: int = 5,
            settings: Settings | None = None, progress: codec.Progress | None = None) -> Explanation:
    """Run the coder's own computation over ``data`` and record what every token costs
    (``progress(tokens done, tokens in all)`` as it goes)."""
    settings = settings or Settings()
    if segment is not None:
        settings = Settings(**{**settings.__dict__, "segment": segment})
    tok = model.tokenizer
    tops: dict[tuple[int, int], list[tuple[bytes, float]]] = {}
    costs: dict[tuple[int, int], float] = {}

    def visit(t: int, rows: np.ndarray, counts: np.ndarray, sym: np.ndarray) -> None:
        for r, b in zip(rows.tolist(), coded_bits(sym, counts).tolist(), strict=True):
            costs[(r, t)] = b
        if top_k:
            p = (counts.astype(np.float64) + 1) / (1 << 24)
            best = np.argsort(-p, axis=1, kind="stable")[:, :top_k]
            for r, row, b in zip(rows, p, best, strict=True):
                tops[(int(r), t)] = [(tok.token_bytes(int(i)), float(row[i])) for i in b]

    tokens, crlf, layout = codec.trace(data, model, settings, visit, progress)
    if not tokens:
        return Explanation(model.name, [], np.zeros(0), np.zeros(0, dtype=np.int64), [])
    order = [(r, t) for r in range(len(layout.lengths)) for t in range(int(layout.lengths[r]))]
    return Explanation(
        model.name,
        [transform.restore(tok.token_bytes(int(i)), crlf) for i in tokens],
        np.array([costs[k] for k in order]),
        np.array([t for _, t in order], dtype=np.int64),
        [tops.get(k, []) for k in order] if top_k else [],
    )


def surprising_spans(ex: Explanation, n: int = 5, width: int = 8) -> list[tuple[int, float, bytes]]:
    """The ``n`` windows of ``width`` tokens that cost the most bits: (first token, bits, bytes)."""
    if len(ex.bits) == 0 or n <= 0:
        return []
    w = min(width, len(ex.bits))
    sums = np.convolve(ex.bits, np.ones(w), mode="valid")
    picked: list[tuple[int, float, bytes]] = []
    for i in np.argsort(-sums):
        if all(abs(int(i) - j) >= w for j, _, _ in picked):
            picked.append((int(i), float(sums[i]), b"".join(ex.pieces[i : i + w])))
        if len(picked) == n:
            break
    return picked


def compare(a: Explanation, b: Explanation) -> np.ndarray:
    """Per token of ``a``: its bits minus what ``b`` pays for the same bytes (negative: a is cheaper)."""
    bb = b.byte_bits()
    out, i = np.zeros(len(a.pieces)), 0
    for k, piece in enumerate(a.pieces):
        out[k] = a.bits[k] - bb[i : i + len(piece)].sum()
        i += len(piece)
    return out


def position_sums(ex: Explanation, max_pos: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokens, bits and bytes at each context position 0..max_pos-1."""
    nbytes = np.array([len(p) for p in ex.pieces], dtype=np.float64)
    pos = np.minimum(ex.position, max_pos)
    count = np.bincount(pos, minlength=max_pos + 1)[:max_pos].astype(np.float64)
    bits = np.bincount(pos, weights=ex.bits, minlength=max_pos + 1)[:max_pos]
    byts = np.bincount(pos, weights=nbytes, minlength=max_pos + 1)[:max_pos]
    return count, bits, byts


def position_curve(ex: Explanation, max_pos: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean bits per token and per byte at each context position 0..max_pos-1 (NaN where unseen)."""
    count, bits, byts = position_sums(ex, max_pos)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.arange(max_pos), bits / count, bits / byts
