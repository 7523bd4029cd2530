"""Short frames (formats 10, 12-14): an input of one block, stored or counted, behind a header of 15-29 bytes.

In the ordinary frame a small file is mostly header: 78 bytes before a counting payload, which
carries 18 of its own. That decided against PPMd on files of a few KB and below. An input of one
block that is stored or coded by counting alone records no model, no tokens and no block layout,
so it gets a frame of its own kind, the whole file: magic, version, kind (stored or counting),
the original length and CRC32, for counting the cm level (version 14: and the cm version) and the
payload length, the header's CRC32 (docs/format.md, the one description of the layout).

A frame ends where its payload does, so another file may follow it (``cat a.lmz b.lmz``: a
concatenation decodes to the concatenation, lmzip.coding.format.read_frames). In version 10 a
counting payload had no length and ran to the end of the file; the reader finds where it ends by
decoding it and coding the bytes again (counting is deterministic: the same bytes the encoder
wrote), so a file after it is read as one and bytes after it that begin no file are an error.
The counting payload is an lmzip.cm stream without its own header, which the reader rebuilds from
the fields above before handing it to lmzip.cm (and its checks): version 14 records the stream's cm
version, 13 holds one of cm version 2 (lmzip.cm.format), 12 and 10 one of cm version 1; 13 and 12 lay
their bytes out alike. A frame is written in the oldest version that holds it (13, 14 for cm version 3),
so a file that an earlier lmzip could read stays readable there.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from lmzip.arith import versions
from lmzip.coding.header import MAGIC as FRAME_MAGIC
from lmzip.coding.header import Header, crc32
from lmzip.coding.header import parse_header as parse_frame_header
from lmzip.coding.legacy import READS as FRAME_READS
from lmzip.coding.source import Check, Source, read_full
from lmzip.errors import FormatError

MAGIC = b"\x89LMz"
MAGICS = (MAGIC, FRAME_MAGIC)  # where another file may start
VERSION = 14  # short frames came with format 10, record their payload length since 12, hold cm version 2 since
# 13, and record their payload's cm version since 14
LEGACY = 10  # a counting payload without its length: it runs to the end of the file
CM_VERSION = {LEGACY: 1, 12: 1, 13: 2}  # the lmzip.cm stream version a short frame's counting payload is in, where
# the frame's version implies it
READS = (LEGACY, 12, 13, VERSION)
MAX_CUTS = 8  # version 10 followed by more bytes: the most places tried where the next file may start
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


@dataclass
class ShortHeader(Header):
    """A short frame's header: the fields of an ordinary one that a stored or counted block fills in."""

    short: bool = True
    cm_version: int = 0  # counting, version 14: its payload's lmzip.cm version (before: the frame's implies it)

    @property
    def counted_by(self) -> int:
        """The lmzip.cm version of a counting payload."""
        return self.cm_version or CM_VERSION[self.version]

    def pack(self) -> bytes:
        """The header bytes, its own CRC32 last."""
        return pack(self)

    @property
    def size(self) -> int:
        """Header length in bytes."""
        return len(pack(self))


def pack(head: ShortHeader) -> bytes:
    """The short header of a stored or counting frame."""
    kind = COUNTING if head.counting else STORED
    body = MAGIC + bytes([head.version, kind]) + _varint(head.original_length) + struct.pack("<I", head.crc32)
    if head.counting:
        body += bytes([level_of(head)]) + (bytes([head.cm_version]) if head.version >= 14 else b"")
        body += _varint(head.payload_length) if head.version > LEGACY else b""
    return body + struct.pack("<I", zlib.crc32(body))


def frame(data: bytes, level: int | None, coded: bytes | None) -> tuple[bytes, Header]:
    """The frame of an input of one block: counted (``coded``: the cm stream, its own header dropped) or stored."""
    if coded is None:
        head = ShortHeader(len(data), crc32(data), stored=True, payload_length=len(data), version=13)
        payload = data
    else:
        from lmzip.cm import format as cmfmt

        payload, cm_version = coded[cmfmt.HEADER_BYTES :], coded[4]
        version = 13 if cm_version == CM_VERSION[13] else VERSION
        head = ShortHeader(len(data), crc32(data), counting=True, arith=versions.COUNTING, model_name=f"cm-{level}",
                           payload_length=len(payload), version=version, cm_version=cm_version * (version >= 14))
    return pack(head) + payload, head


def parse_header(blob: bytes) -> ShortHeader:
    """The header at the start of ``blob`` (its payload length still unknown: 0), checked."""
    if len(blob) < 6:
        raise FormatError("truncated header")
    version = blob[4]
    if version not in READS:
        raise FormatError(f"unsupported format version {version} of a short frame")
    kind = blob[5]
    if kind not in (STORED, COUNTING):
        raise FormatError("unsupported short frame kind (written by a newer lmzip?)")
    length, at = _read_varint(blob, 6)
    end, payload = at + 4 + (kind == COUNTING) * (1 + (version >= 14)), length
    if kind == COUNTING and version > LEGACY:
        payload, end = _read_varint(blob, end)
        if payload >= length or payload == 0:
            raise FormatError("corrupt header (a counting payload as long as the original)")
    if len(blob) < end + 4:
        raise FormatError("truncated header")
    (want,) = struct.unpack_from("<I", blob, end)
    if zlib.crc32(blob[:end]) != want:
        raise FormatError("corrupt header (header checksum mismatch)")
    (crc,) = struct.unpack_from("<I", blob, at)
    if kind == STORED:
        return ShortHeader(length, crc, stored=True, payload_length=length, version=version)
    level, cm_version = blob[at + 4], blob[at + 5] if version >= 14 else 0
    if not 1 <= level <= 9:
        raise FormatError(f"corrupt header (counting level {level})")
    if version >= 14 and cm_version <= CM_VERSION[13]:
        raise FormatError(f"corrupt header (cm version {cm_version} in a version-14 frame)")
    return ShortHeader(length, crc, counting=True, arith=versions.COUNTING, model_name=f"cm-{level}",
                       version=version, payload_length=payload if version > LEGACY else 0, cm_version=cm_version)


def read(src: Source, start: bytes, check: Check | None = None) -> tuple[ShortHeader, bytes]:
    """The short frame whose first bytes ``start`` were read already: header and payload; what was read
    past its end is put back into ``src`` (another file may follow). A stored payload holds exactly the
    original's length; a counting one less (else it was stored)."""
    blob = start + read_full(src, max(0, 29 - len(start)))  # a short header is at most 29 bytes
    head = parse_header(blob)
    if head.version == LEGACY and head.counting:
        return head, _legacy_payload(src, head, blob[head.size :], check)
    want = head.payload_length
    payload = blob[head.size : head.size + want]
    src.unread(blob[head.size + want :])
    payload += read_full(src, want - len(payload))
    if len(payload) < want:
        raise FormatError(f"truncated file ({len(payload)} of {want} payload bytes)")
    return head, payload


def _legacy_payload(src: Source, head: Header, payload: bytes, check: Check | None) -> bytes:
    """A version-10 counting payload, which records no length: where it ends, found by ``check`` (which
    decodes the frame and codes the bytes again: the very payload the encoder wrote), on the bytes up to
    the original's length or, where those do not decode, up to where another file's magic begins;
    without ``check`` (listing headers), the end of the file or the first such magic."""
    want = max(0, head.original_length - 1)  # bytes read past this would make the frame "as long as the original"
    payload += read_full(src, max(0, want - len(payload)))
    more = src.read(1)
    src.unread(more)
    cuts = [i for i in range(1, len(payload) - 3) if payload[i : i + 4] in MAGICS][:MAX_CUTS]
    if check is not None:
        for window in (len(payload), *cuts):
            n = check(head, payload[:window])
            if n is not None:
                src.unread(payload[n:])
                head.payload_length = n
                return payload[:n]
        raise FormatError("corrupt data (a format-10 counting payload that does not decode and code back to "
                          "itself)")
    cut = next((c for c in cuts if _starts_a_file(payload[c:])), None)  # listing headers: no decoding
    if cut is not None:
        src.unread(payload[cut:])
        head.payload_length = cut
        return payload[:cut]
    if more or len(payload) > want:
        raise FormatError("corrupt header (a counting payload as long as the original)")
    head.payload_length = len(payload)
    return payload  # to the end of the file


def _starts_a_file(blob: bytes) -> bool:
    """Whether ``blob`` begins with a header that reads (or that only the bytes at hand cut short)."""
    try:
        parse_header(blob) if blob[:4] == MAGIC else parse_frame_header(blob, FRAME_READS)
    except FormatError as e:
        return "truncated header" in str(e)
    return True


def cm_stream(head: ShortHeader, payload: bytes) -> bytes:
    """The lmzip.cm stream a counting short frame stands for (its header rebuilt from the frame's)."""
    from lmzip.cm import format as cmfmt

    return cmfmt.pack(level_of(head), head.original_length, head.crc32, head.counted_by) + payload

