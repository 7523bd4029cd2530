"""constriction glue: the one quantization function and the batched range coder calls.

No torch here: probabilities arrive as float32 numpy arrays [B, V]."""

from __future__ import annotations

import constriction
import numpy as np

Categorical = constriction.stream.model.Categorical
RangeEncoder = constriction.stream.queue.RangeEncoder
RangeDecoder = constriction.stream.queue.RangeDecoder

# Both sides must use the very same family object settings: perfect=False is explicit, since the
# default (perfect=True) is both slow and a different quantization.
FAMILY = Categorical(perfect=False)


def as_rows(probs: np.ndarray) -> np.ndarray:
    """The coder's input: C-contiguous float32 rows (constriction rejects anything else)."""
    return np.ascontiguousarray(probs, dtype=np.float32)


class Encoder:
    """Encodes one step of B streams at a time into a single queue (FIFO) range-coder stream."""

    def __init__(self) -> None:
        self._enc = RangeEncoder()

    def code(self, symbols: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """Encode ``symbols`` [B] under ``probs`` [B, V]; returns the symbols (mirror of Decoder)."""
        self._enc.encode(np.ascontiguousarray(symbols, dtype=np.int32), FAMILY, as_rows(probs))
        return symbols

    def finish(self) -> bytes:
        """The compressed words as little-endian bytes."""
        return self._enc.get_compressed().astype("<u4").tobytes()


class Decoder:
    """The mirror image of Encoder: same rows in, the symbols out."""

    def __init__(self, payload: bytes) -> None:
        if len(payload) % 4:
            raise ValueError("payload is not a whole number of 32-bit words")
        self._dec = RangeDecoder(np.frombuffer(payload, dtype="<u4").astype(np.uint32))

    def code(self, symbols: np.ndarray | None, probs: np.ndarray) -> np.ndarray:
        """Decode one symbol per row of ``probs`` (``symbols`` is ignored: the decoder learns them)."""
        try:
            return np.asarray(self._dec.decode(FAMILY, as_rows(probs)), dtype=np.int64)
        except (AssertionError, ValueError, KeyError, RuntimeError) as e:  # constriction asserts on bad data
            raise ValueError(str(e) or "invalid compressed data") from e


def ideal_bits(symbols: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """-log2 p(symbol) under the normalized rows: the cross-entropy the coder approaches."""
    p = probs.astype(np.float64)
    return -np.log2(p[np.arange(len(symbols)), symbols] / p.sum(axis=1))


PRECISION = 24


def quantized_bits(symbols: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The bits the coder really pays: -log2 of the fixed-point probability constriction derives
    from each float32 row (its lazy "fast" quantization: cumulative float32 sums scaled to
    2^24 - V, truncated, plus one per symbol so none is zero)."""
    p = as_rows(probs)
    n, v = p.shape
    cum = np.cumsum(p, axis=1, dtype=np.float32)  # sequential float32 sums, as in Rust's iter().sum()
    scale = np.float32((1 << PRECISION) - v) / cum[:, -1]
    rows = np.arange(n)
    s = symbols.astype(np.int64)
    left_f = np.where(s > 0, cum[rows, np.maximum(s - 1, 0)], np.float32(0))
    right_f = left_f + p[rows, s]
    left = np.floor(left_f * scale).astype(np.int64) + s
    right = np.where(s == v - 1, 1 << PRECISION, np.floor(right_f * scale).astype(np.int64) + s + 1)
    return PRECISION - np.log2((right - left).astype(np.float64))
