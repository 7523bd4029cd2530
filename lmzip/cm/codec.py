"""compress and decompress: the header around the model's payload, checked before anything is allocated."""

from __future__ import annotations

import zlib

import numpy as np

from lmzip.cm import format as fmt
from lmzip.cm import order0, x86
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
    src = np.frombuffer(data, dtype=np.uint8)
    if version == fmt.ORDER0:
        return head + order0.encode(src).tobytes()
    filt = x86.choose(src) if version >= fmt.X86 else x86.NONE
    payload = run(True, x86.forward(src, filt), len(data), allocate(level, version, len(data)), marks=marks)
    named = bytes([filt]) if version >= fmt.X86 else b""  # version 21 on: the payload's first byte names the filter
    if version >= fmt.SETTLED:  # the order-0 model alone where it codes smaller (bytes drawn independently)
        alone = order0.encode(src)
        if len(alone) < len(named) + len(payload):
            if marks is not None:  # the profile of the payload kept, as far as the mixers' says where its bytes went
                marks[:] = marks * len(alone) // (len(named) + len(payload))
            return fmt.pack(level, len(data), zlib.crc32(data), fmt.ORDER0) + alone.tobytes()
    return head + named + payload.tobytes()


def decompress(blob: bytes) -> bytes:
    """The original bytes of a `compress` blob; FormatError/IntegrityError (one line) if it is damaged."""
    level, length, crc, version = fmt.parse(blob)
    src = np.frombuffer(blob, dtype=np.uint8)[fmt.HEADER_BYTES:]
    if length == 0:
        out = b""
    elif version == fmt.ORDER0:
        out = order0.decode(src, length).tobytes()
    else:
        filt = x86.NONE
        if version >= fmt.X86:
            filt, src = int(src[0]), src[1:]
            if filt not in (x86.NONE, x86.X86):
                raise FormatError(f"cm stream names filter {filt}, which this build does not know")
        out = x86.inverse(run(False, src, length, allocate(level, version, length)), filt).tobytes()
    if zlib.crc32(out) != crc:
        raise IntegrityError("cm stream is corrupt: CRC32 of the decoded bytes does not match")
    return out
