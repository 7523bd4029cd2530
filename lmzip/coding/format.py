"""The .lmz container: a file's frames read, split and checked, the frame kind chosen once from the
magic. Imports no torch, so `lmzip list` is instant.

A file is one or more frames, one per block of the input, each an ordinary header (lmzip.coding.header)
and a payload, or, for an input of one block that is stored or counted, one short frame
(lmzip.coding.short); formats 8-10 are read through lmzip.coding.legacy (a format-8 file is one frame
that holds the whole input). A file ends where
its last frame does, so another may follow (``cat a.lmz b.lmz``). Every byte of every kind is laid out
in docs/format.md.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from typing import BinaryIO

from lmzip.coding import header, legacy, short
from lmzip.coding.header import (  # noqa: F401 - the container's names that tools and tests read through it
    FIELDS,
    FLAG_COUNT,
    FLAG_LAST,
    FLAG_MIX,
    MAGIC,
    SHORT_MAGIC,
    VERSION,
    Header,
    crc32,
    decode_memory,
)
from lmzip.coding.source import Check, Source, read_full
from lmzip.errors import FormatError, IntegrityError


def parse_header(blob: bytes) -> Header:
    """Parse and check the header at the start of ``blob``, of the kind its magic names (the payload may
    follow, or not)."""
    if blob[:4] == SHORT_MAGIC:
        return short.parse_header(blob, legacy.SHORT_READS)
    return header.parse_header(blob, legacy.READS)


def header_size(prefix: bytes) -> int:
    """The length of the ordinary header that starts ``prefix`` (at least its first 62 bytes), of any
    version this lmzip reads."""
    return header.header_size(prefix, legacy.READS)


def _read_short(src: Source, start: bytes, check: Check | None = None) -> tuple[Header, bytes]:
    """A short frame of any version this lmzip reads (see short.read)."""
    return short.read(src, start, check, legacy.SHORT_READS, legacy.payload_to_end)


def unpack(blob: bytes) -> tuple[Header, bytes]:
    """Parse and check a file of one frame (every version-8 file; a version-9 file of one block);
    returns the header and the payload."""
    h = parse_header(blob)
    payload = blob[h.size :]
    if h.short:  # its payload's length is checked as read_frames does
        src = Source(io.BytesIO(blob[4:]))
        h, payload = _read_short(src, blob[:4])
        if src.read(1):
            raise FormatError("trailing garbage after the payload")
        return h, payload
    if len(payload) < h.payload_length:
        raise FormatError(f"truncated file ({len(payload)} of {h.payload_length} payload bytes)")
    if len(payload) > h.payload_length:
        if not h.last:
            raise FormatError("a file of several blocks (read it with lmzip.coding.stream)")
        raise FormatError(f"trailing garbage after the payload ({len(payload) - h.payload_length} bytes)")
    return h, payload


def stored_frame(data: bytes, **where) -> tuple[bytes, Header]:
    """The block as it is, behind a header that says so (``where``: block, block_size, last)."""
    head = Header(len(data), crc32(data), stored=True, payload_length=len(data), **where)
    return head.pack() + data, head


def verify(head: Header, data: bytes, note: str = "") -> bytes:
    """Return ``data`` if it has the original's length and CRC32, else raise IntegrityError."""
    if len(data) != head.original_length or crc32(data) != head.crc32:
        raise IntegrityError("corrupt data: the decoded bytes fail the CRC32 check" + note)
    return data


def read_frames(src: BinaryIO, check: Check | None = None) -> Iterator[tuple[Header, bytes]]:
    """Every frame of a file, checked: the numbering, the last flag, and after the last frame either the
    end or another file (``cat a.lmz b.lmz`` holds the frames of both, each file numbered from 0), never
    bytes that are neither. ``check``: for the rare format-10 short frame with more bytes after it
    (lmzip.coding.short)."""
    src = src if isinstance(src, Source) else Source(src)
    files = 0
    while True:
        start = read_full(src, 62)
        if files and not start:
            return
        if files and start[:4] not in (MAGIC, SHORT_MAGIC):
            n = len(start) + len(src.read())
            raise FormatError(f"trailing garbage after the payload ({n} bytes)")
        yield from _one_file(src, start, check)
        files += 1


def _one_file(src: Source, start: bytes, check: Check | None) -> Iterator[tuple[Header, bytes]]:
    """The frames of one compressed file whose first bytes ``start`` were read already."""
    if start[:4] == SHORT_MAGIC:  # the whole file is one short frame
        yield _read_short(src, start, check)
        return
    expect, block_size = 0, 0
    while True:
        if not start and expect > 0:
            raise FormatError(f"truncated file (block {expect} and after are missing)")
        if len(start) < 62:
            parse_header(start)  # raises what is wrong: bad magic, version, truncated header
        head = parse_header(start + read_full(src, header_size(start) - 62))
        if head.block_size and head.block != expect:  # (a format-8 frame has no blocks: block_size 0)
            raise FormatError(f"corrupt file (block {head.block} where block {expect} belongs)")
        if expect > 0 and head.block_size != block_size:
            raise FormatError(f"corrupt file (block {expect} does not match the blocks before it)")
        block_size = head.block_size
        payload = read_full(src, head.payload_length)
        if len(payload) < head.payload_length:
            raise FormatError(f"truncated file ({len(payload)} of {head.payload_length} payload bytes"
                              + (f" of block {expect})" if head.block_size else ")"))
        yield head, payload
        expect += 1
        if head.last:
            return
        start = read_full(src, 62)


def join_streams(streams: list[bytes]) -> bytes:
    """The payload of G coded groups: one stream as it is; several behind their uint32 lengths."""
    if len(streams) == 1:
        return streams[0]
    return struct.pack(f"<{len(streams)}I", *map(len, streams)) + b"".join(streams)


def split_streams(payload: bytes, groups: int) -> list[bytes]:
    """The mirror image of join_streams."""
    if groups == 1:
        return [payload]
    if len(payload) < 4 * groups:
        raise FormatError("corrupt payload (group table truncated)")
    sizes = struct.unpack_from(f"<{groups}I", payload)
    if 4 * groups + sum(sizes) != len(payload):
        raise FormatError("corrupt payload (group lengths do not add up)")
    out, i = [], 4 * groups
    for n in sizes:
        out.append(payload[i : i + n])
        i += n
    return out
