"""Blocks coded by counting alone: lmzip.cm's context mixing inside an .lmz frame (format 10).

The frame says so with its counting flag and arithmetic 5; its payload is a whole lmzip.cm stream
(which carries its level, the block's length and CRC32 again, and is checked before its tables are
allocated). No language model runs, so no model id is recorded and any lmzip of format 10 decodes it;
nothing here imports torch, so `lmzip -1` and its decompression start at once.
"""

from __future__ import annotations

from collections.abc import Callable

from lmzip.arith import versions
from lmzip.coding.format import stored_frame, verify
from lmzip.coding.header import Header, crc32
from lmzip.errors import LmzipError

Progress = Callable[[int, int], None]


def encode(data: bytes, level: int | None, progress: Progress | None = None, whole: bool = False,
           marks=None, version: int | None = None, **where) -> tuple[bytes, Header, float]:
    """The block's frame coded at cm ``level`` (or stored where that would not shrink it, or where
    ``level`` is None: nothing coded, 0 bits), and its bits; ``whole``: the whole input, so a short frame;
    ``marks``: filled with counting's cost profile (lmzip.cm.model.run); ``version``: the cm version (None:
    the level's)."""
    from lmzip import cm
    from lmzip.cm import format as cmfmt
    from lmzip.coding import short

    try:
        payload = cm.compress(data, level, marks, version) if level is not None else None
    except MemoryError as e:  # the level's tables (up to 4,245 MiB at 9; less for a short input) did not fit
        need = cm.table_bytes(level, version, len(data)) >> 20
        raise LmzipError(f"not enough memory for the tables of counting level {level} "
                         f"({need} MiB); choose a lower one (-m cm-1 ... cm-8)") from e
    if progress:
        progress(len(data), len(data))
    if whole:
        keep = payload is not None and len(payload) - cmfmt.HEADER_BYTES < len(data)
        blob, head = short.frame(data, level, payload if keep else None)
        return blob, head, 8.0 * len(payload or b"")
    if payload is None or len(payload) >= len(data):
        return (*stored_frame(data, **where), 8.0 * len(payload or b""))
    head = Header(len(data), crc32(data), counting=True, arith=versions.COUNTING, model_name=f"cm-{level}",
                  payload_length=len(payload), **where)
    return head.pack() + payload, head, 8.0 * len(payload)


def decode(head: Header, payload: bytes, progress: Progress | None = None) -> bytes:
    """The mirror image of ``encode``: the stream's tables checked against the memory there is, then decoded."""
    from lmzip import cm
    from lmzip.cm import format as cmfmt
    from lmzip.coding import parallel, short

    if head.short:  # the frame carries the stream's fields; the stream's own header is rebuilt
        payload = short.cm_stream(head, payload)
    level, length, _, version = cmfmt.parse(payload)
    if length != head.original_length:
        raise LmzipError("corrupt data (the counting stream's length differs from the header's)")
    need, have = cm.table_bytes(level, version, length) + 2 * length, parallel.available_memory()
    if have is not None and need > have:
        raise LmzipError(f"needs {need >> 20} MiB of memory to decode, {have >> 20} MiB available")
    data = verify(head, cm.decompress(payload))
    if progress:
        progress(len(data), len(data))
    return data
