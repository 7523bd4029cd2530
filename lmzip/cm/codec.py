"""compress and decompress: the header around the model's payload, checked before anything is allocated."""

from __future__ import annotations

import zlib

import numpy as np

from lmzip.cm import format as fmt
from lmzip.cm.model import allocate, run
from lmzip.errors import FormatError, IntegrityError

DEFAULT_LEVEL = fmt.DEFAULT_LEVEL


def compress(data: bytes, level: int = DEFAULT_LEVEL, marks: np.ndarray | None = None,
             version: int | None = None) -> bytes:
    """Compress bytes with the context-mixing model; `level` 1..9 sets the table memory and, from
    format.HEAVY on, the models (``marks``: filled with the payload's length after every K-th part of the
    input, model.run's profile; ``version``: another cm version's models than the level's, to write again
    what it wrote)."""
    if level not in fmt.LEVELS:
        raise FormatError(f"cm level {level} is out of range 1..9")
    version = fmt.version_for(level) if version is None else version
    if version not in fmt.VERSIONS:
        raise FormatError(f"cm stream version {version} is not supported")
    data = bytes(data)
    head = fmt.pack(level, len(data), zlib.crc32(data), version)
    if not data:
        return head
    payload = run(True, np.frombuffer(data, dtype=np.uint8), len(data), allocate(level, version, len(data)),
                  marks=marks)
    return head + payload.tobytes()


def decompress(blob: bytes) -> bytes:
    """The original bytes of a `compress` blob; FormatError/IntegrityError (one line) if it is damaged."""
    level, length, crc, version = fmt.parse(blob)
    if length == 0:
        out = b""
    else:
        src = np.frombuffer(blob, dtype=np.uint8)[fmt.HEADER_BYTES:]
        out = run(False, src, length, allocate(level, version, length)).tobytes()
    if zlib.crc32(out) != crc:
        raise IntegrityError("cm stream is corrupt: CRC32 of the decoded bytes does not match")
    return out
