"""compress and decompress: the header around the model's payload, checked before anything is allocated."""

from __future__ import annotations

import zlib

import numpy as np

from lmzip.cm import format as fmt
from lmzip.cm import order0, primers, x86
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
    src = np.frombuffer(data, dtype=np.uint8)
    primer = _primer(src) if version == fmt.PRIMED else primers.NONE
    version = fmt.SETTLED if version == fmt.PRIMED and primer == primers.NONE else version  # none fits: version 27
    head = fmt.pack(level, len(data), zlib.crc32(data), version)
    if not data:
        return head
    if version == fmt.ORDER0:
        return head + order0.encode(src).tobytes()
    filt = x86.choose(src) if version >= fmt.X86 else x86.NONE
    payload = _run(True, x86.forward(src, filt), len(data), level, version, primer, marks)
    named = bytes([filt]) if version >= fmt.X86 else b""  # version 21 on: the payload's first byte names the filter
    named += bytes([primer]) if version == fmt.PRIMED else b""  # version 29: the second, the primer
    if version >= fmt.SETTLED:  # the order-0 model alone where it codes smaller (bytes drawn independently)
        alone = order0.encode(src)
        if len(alone) < len(named) + len(payload):
            if marks is not None:  # the profile of the payload kept, as far as the mixers' says where its bytes went
                marks[:] = marks * len(alone) // (len(named) + len(payload))
            return fmt.pack(level, len(data), zlib.crc32(data), fmt.ORDER0) + alone.tobytes()
    return head + named + payload.tobytes()


TRIAL = 1 << 15  # the input's first bytes a primer is tried on


def _primer(src: np.ndarray) -> int:
    """The primer of ``src``'s kind (lmzip.cm.primers.choose) where it codes the first TRIAL bytes smaller with level
    1's light models than they code alone (a primer of another language makes them larger), else NONE."""
    number = primers.choose(src)
    if number == primers.NONE:
        return number
    head, before = src[:TRIAL], primers.load(number)
    alone = run(True, head, len(head), allocate(1, fmt.LIGHT, len(head)))
    primed = run(True, head, len(head), allocate(1, fmt.LIGHT, len(head) + len(before)), primer=before)
    return number if len(primed) < len(alone) else primers.NONE


def _run(encode: bool, src: np.ndarray, n: int, level: int, version: int, primer: int,
         marks: np.ndarray | None = None) -> np.ndarray:
    """model.run over tables for the input and its primer's bytes (version 29), the primer's history first."""
    before = primers.load(primer) if primer != primers.NONE else None
    tables = allocate(level, version, n + (0 if before is None else len(before)))
    return run(encode, src, n, tables, marks=marks, primer=before)


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
        primer = primers.NONE
        if version == fmt.PRIMED:
            if len(src) == 0:
                raise FormatError("truncated cm stream: no primer byte")
            primer, src = int(src[0]), src[1:]
        out = x86.inverse(_run(False, src, length, level, version, primer), filt).tobytes()
    if zlib.crc32(out) != crc:
        raise IntegrityError("cm stream is corrupt: CRC32 of the decoded bytes does not match")
    return out
