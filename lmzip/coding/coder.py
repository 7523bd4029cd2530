"""constriction glue: the batched range coder calls, on integer counts.

No torch here: each step's rows arrive as a float32 numpy array [B, V] of integer counts that sum to
exactly 2^24 - V per row (lmzip.arith.exact.count_total). Float32 holds such integers exactly, every
partial sum of a row is an integer below 2^24, and so constriction's quantization (cumulative sums
scaled by (2^24 - V) / total = 1) gives each symbol count + 1 out of 2^24, exactly, on any machine."""

from __future__ import annotations

import constriction
import numpy as np

Categorical = constriction.stream.model.Categorical
RangeEncoder = constriction.stream.queue.RangeEncoder
RangeDecoder = constriction.stream.queue.RangeDecoder

# Both sides must use the very same family object settings: perfect=False is explicit, since the
# default (perfect=True) is both slow and a different quantization.
FAMILY = Categorical(perfect=False)


def as_rows(counts: np.ndarray) -> np.ndarray:
    """The coder's input: C-contiguous float32 rows (constriction rejects anything else)."""
    return np.ascontiguousarray(counts, dtype=np.float32)


class Encoder:
    """Encodes one step of B streams at a time into a single queue (FIFO) range-coder stream."""

    def __init__(self) -> None:
        self._enc = RangeEncoder()

    def code(self, symbols: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Encode ``symbols`` [B] under ``counts`` [B, V]; returns the symbols (mirror of Decoder)."""
        self._enc.encode(np.ascontiguousarray(symbols, dtype=np.int32), FAMILY, as_rows(counts))
        return symbols

    def finish(self) -> bytes:
        """The compressed words as little-endian bytes."""
        return self._enc.get_compressed().astype("<u4").tobytes()


# Once the decoder has read its last word, a genuine stream has at most the coder's 64-bit state of
# information left to give (measured: at most 45 bits over 300 random streams). Twice that, and the
# words have run out before the tokens the header promised: the work stays bounded by the payload.
BITS_AFTER_THE_WORDS = 128


class Decoder:
    """The mirror image of Encoder: same rows in, the symbols out."""

    def __init__(self, payload: bytes) -> None:
        if len(payload) % 4:
            raise ValueError("payload is not a whole number of 32-bit words")
        self._dec = RangeDecoder(np.frombuffer(payload, dtype="<u4").astype(np.uint32))
        self._after = 0.0  # bits decoded since the last word was read

    def code(self, symbols: np.ndarray | None, counts: np.ndarray) -> np.ndarray:
        """Decode one symbol per row of ``counts`` (``symbols`` is ignored: the decoder learns them)."""
        rows, ran_out = as_rows(counts), self._dec.maybe_exhausted()
        try:
            out = np.asarray(self._dec.decode(FAMILY, rows), dtype=np.int64)
        except (AssertionError, ValueError, KeyError, RuntimeError) as e:  # constriction asserts on bad data
            raise ValueError(str(e) or "invalid compressed data") from e
        if ran_out:
            self._after += float(coded_bits(out, rows).sum())
            if self._after > BITS_AFTER_THE_WORDS:
                raise ValueError("the coded words ran out before the last token")
        return out


PRECISION = 24


def coded_bits(symbols: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The bits the coder really pays for each symbol: -log2((count + 1) / 2^24)."""
    c = counts[np.arange(len(symbols)), symbols.astype(np.int64)].astype(np.float64)
    return PRECISION - np.log2(c + 1)
