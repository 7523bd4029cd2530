"""Short frames (format 10): an input of one block, stored or counted, behind a header of 15-24 bytes.

In the ordinary frame a small file is mostly header: 78 bytes before a counting payload, which
carries 18 of its own. That decided against PPMd on files of a few KB and below. An input of one
block that is stored or coded by counting alone records no model, no tokens and no block layout,
so it gets a frame of its own kind, the whole file (little-endian):

| size | field |
|---|---|
| 4 | magic `89 4C 4D 7A` (`\\x89LMz`) |
| 1 | version (10) |
| 1 | kind: 1 = stored, 2 = counting |
| 1-9 | original length in bytes (LEB128, below 2^63) |
| 4 | CRC32 of the original bytes |
| 1 | counting only: the lmzip.cm level, 1-9 |
| 4 | CRC32 of the header bytes before it |
| ... | to the end of the file: the original bytes (stored), or the cm coder's bytes (counting) |

The counting payload is an lmzip.cm stream without its own header, which the reader rebuilds from
the fields above before handing it to lmzip.cm (and its checks).
"""

from __future__ import annotations

import struct
import zlib
from typing import BinaryIO

from lmzip.coding.format import ARITH_COUNT, Header, crc32, read_full
from lmzip.errors import FormatError

MAGIC = b"\x89LMz"
VERSION = 10  # short frames came with format 10 and did not change in 11: they still say 10
STORED, COUNTING = 1, 2
MAX_LENGTH = (1 << 63) - 1


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _read_varint(blob: bytes, at: int) -> tuple[int, int]:
    """(value, the offset after it); a truncated, overlong or too large number is a FormatError."""
    n = shift = 0
    for i in range(at, min(len(blob), at + 9)):
        n |= (blob[i] & 0x7F) << shift
        if not blob[i] & 0x80:
            if i > at and blob[i] == 0:
                raise FormatError("corrupt header (an overlong length)")
            return n, i + 1
        shift += 7
    raise FormatError("truncated header" if len(blob) < at + 9 else "corrupt header (a length of over 63 bits)")


def level_of(head: Header) -> int:
    """The cm level a counting frame was coded at (its model name, ``cm-L``)."""
    return int(head.model_name[3:])


def pack(head: Header) -> bytes:
    """The short header of a stored or counting frame (``head.short``)."""
    kind = COUNTING if head.counting else STORED
    body = MAGIC + bytes([VERSION, kind]) + _varint(head.original_length) + struct.pack("<I", head.crc32)
    if head.counting:
        body += bytes([level_of(head)])
    return body + struct.pack("<I", zlib.crc32(body))


def frame(data: bytes, level: int | None, coded: bytes | None) -> tuple[bytes, Header]:
    """The whole file for one block: counted (``coded``: the cm stream, its own header dropped) or stored."""
    if coded is None:
        head = Header(len(data), crc32(data), stored=True, payload_length=len(data), short=True, version=VERSION)
        payload = data
    else:
        from lmzip.cm import format as cmfmt

        payload = coded[cmfmt.HEADER_BYTES :]
        head = Header(len(data), crc32(data), counting=True, arith=ARITH_COUNT, model_name=f"cm-{level}",
                      payload_length=len(payload), short=True, version=VERSION)
    return pack(head) + payload, head


def parse_header(blob: bytes) -> Header:
    """The header at the start of ``blob`` (its payload length still unknown: 0), checked."""
    if len(blob) < 6:
        raise FormatError("truncated header")
    if blob[4] != VERSION:
        raise FormatError(f"unsupported format version {blob[4]} of a short frame")
    kind = blob[5]
    if kind not in (STORED, COUNTING):
        raise FormatError("unsupported short frame kind (written by a newer lmzip?)")
    length, at = _read_varint(blob, 6)
    end = at + 4 + (kind == COUNTING)
    if len(blob) < end + 4:
        raise FormatError("truncated header")
    (want,) = struct.unpack_from("<I", blob, end)
    if zlib.crc32(blob[:end]) != want:
        raise FormatError("corrupt header (header checksum mismatch)")
    (crc,) = struct.unpack_from("<I", blob, at)
    if kind == STORED:
        return Header(length, crc, stored=True, short=True, version=VERSION)
    level = blob[at + 4]
    if not 1 <= level <= 9:
        raise FormatError(f"corrupt header (counting level {level})")
    return Header(length, crc, counting=True, arith=ARITH_COUNT, model_name=f"cm-{level}", short=True, version=VERSION)


def read(src: BinaryIO, start: bytes) -> tuple[Header, bytes]:
    """The one frame of a short file whose first bytes ``start`` were read already: header and payload.
    A stored payload holds exactly the original's length; a counting one less (else it was stored)."""
    blob = start + read_full(src, max(0, 24 - len(start)))  # a short header is at most 24 bytes
    head = parse_header(blob)
    want = head.original_length if head.stored else max(0, head.original_length - 1)
    payload = blob[head.size :]
    payload += read_full(src, max(0, want - len(payload)))
    if len(payload) < want and head.stored:
        raise FormatError(f"truncated file ({len(payload)} of {want} payload bytes)")
    extra = len(payload) - want + len(src.read(1))
    if extra > 0:
        raise FormatError("trailing garbage after the payload" if head.stored
                          else "corrupt header (a counting payload as long as the original)")
    head.payload_length = len(payload)
    return head, payload


def cm_stream(head: Header, payload: bytes) -> bytes:
    """The lmzip.cm stream a counting short frame stands for (its header rebuilt from the frame's)."""
    from lmzip.cm import format as cmfmt

    return cmfmt.pack(level_of(head), head.original_length, head.crc32) + payload

