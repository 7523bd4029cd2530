"""A counting context-mixing compressor (the paq/lpaq family) in exact integer arithmetic.

Where the neural half of lmzip knows language in general, this model counts what *this* stream did:
orders 0-6, words, sparse contexts and the longest earlier match each predict every bit, a logistic
mixer weighs them, APM stages correct the mix, and a 32-bit arithmetic coder codes the bit.

Determinism. The decoder must reproduce each of the encoder's probabilities exactly, on any
machine, or the stream is lost. So the coding path uses integers only: probabilities are 12/16/22-bit
integers, stretch/squash are tables built by integer interpolation from fixed integer knots, weights
are int32 with 16 fractional bits, learning rates are integer multipliers and shifts, and hashes are
32-bit values masked after every multiply (multipliers < 2^31, so no int64 product overflows).
There is no float anywhere in the loop, so fast-math, FMA contraction, vectorisation order or
thread count cannot change a result; the loop is single-threaded and compiled by numba (cache=True).

Memory is fixed by the level (1..9): the tables of level L take `table_bytes(L)`, allocated before
coding, plus the input/output buffers; a hostile header cannot ask for more (see `format`).
"""

from __future__ import annotations

import zlib

import numpy as np

from lmzip.cm import format as fmt
from lmzip.cm.model import allocate, run, table_bytes
from lmzip.errors import FormatError, IntegrityError

DEFAULT_LEVEL = fmt.DEFAULT_LEVEL
__all__ = ["compress", "decompress", "table_bytes", "DEFAULT_LEVEL"]


def compress(data: bytes, level: int = DEFAULT_LEVEL) -> bytes:
    """Compress bytes with the context-mixing model; `level` 1..9 sets the table memory."""
    if level not in fmt.LEVELS:
        raise FormatError(f"cm level {level} is out of range 1..9")
    data = bytes(data)
    head = fmt.pack(level, len(data), zlib.crc32(data))
    if not data:
        return head
    payload = run(True, np.frombuffer(data, dtype=np.uint8), len(data), allocate(level))
    return head + payload.tobytes()


def decompress(blob: bytes) -> bytes:
    """The original bytes of a `compress` blob; FormatError/IntegrityError (one line) if it is damaged."""
    level, length, crc = fmt.parse(blob)
    if length == 0:
        out = b""
    else:
        src = np.frombuffer(blob, dtype=np.uint8)[fmt.HEADER_BYTES:]
        out = run(False, src, length, allocate(level)).tobytes()
    if zlib.crc32(out) != crc:
        raise IntegrityError("cm stream is corrupt: CRC32 of the decoded bytes does not match")
    return out
