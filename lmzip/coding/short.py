"""Short frames (versions 12-14; format 10's, lmzip.coding.legacy): an input of one block, stored or counted,
behind a header of 15-29 bytes.

In the ordinary frame a small file is mostly header: 78 bytes before a counting payload, which
carries 18 of its own. That decided against PPMd on files of a few KB and below. An input of one
block that is stored or coded by counting alone records no model, no tokens and no block layout,
so it gets a frame of its own kind, the whole file: magic, version, kind (stored or counting),
the original length and CRC32, for counting the cm level (version 14: and the cm version) and the
payload length, the header's CRC32 (docs/format.md, the one description of the layout).

A frame ends where its payload does, so another file may follow it (``cat a.lmz b.lmz``: a
concatenation decodes to the concatenation, lmzip.coding.format.read_frames; in format 10 a counting
payload ran to the end of the file: lmzip.coding.legacy). The counting payload is an lmzip.cm stream
without its own header, which the reader rebuilds from the fields above before handing it to lmzip.cm
(and its checks): version 14 records the stream's cm version, 13 holds one of cm version 2
(lmzip.cm.format), 12 one of cm version 1; 13 and 12 lay their bytes out alike (`ShortLayout`). A
frame is written in the oldest version that holds it (13, 14 for cm version 3 or later), so a file that an
earlier lmzip could read stays readable there.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from lmzip.arith import versions
from lmzip.coding.header import MAGIC as FRAME_MAGIC
from lmzip.coding.header import Header, crc32
from lmzip.coding.source import Check, Source, read_full
from lmzip.errors import FormatError

MAGIC = b"\x89LMz"
MAGICS = (MAGIC, FRAME_MAGIC)  # where another file may start
VERSION = 14
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


@dataclass(frozen=True)
class ShortLayout:
    """What one version of the short frame holds (12-14 here; format 10's in lmzip.coding.legacy)."""

    version: int
    length: bool = True  # a counting payload's length follows the level (else it runs to the end of the file)
    cm: int = 0  # the lmzip.cm version of every counting payload (0: a byte after the level records it)


# version 12 records the payload's length, 13 holds cm version 2, 14 records the payload's cm version
LAYOUTS = {12: ShortLayout(12, cm=1), 13: ShortLayout(13, cm=2), 14: ShortLayout(VERSION)}
IMPLIED_CM = max(layout.cm for layout in LAYOUTS.values())  # a recorded cm version is newer than this
MAX_HEADER = 29  # bytes


def level_of(head: Header) -> int:
    """The cm level a counting frame was coded at (its model name, ``cm-L``)."""
    return int(head.model_name[3:])


@dataclass
class ShortHeader(Header):
    """A short frame's header: the fields of an ordinary one that a stored or counted block fills in."""

    short: bool = True
    cm_version: int = 0  # counting: its payload's lmzip.cm version (recorded, or implied by the version)
    layout: ShortLayout | None = field(default=None, compare=False, repr=False)  # the version's (None: LAYOUTS')

    @property
    def counted_by(self) -> int:
        """The lmzip.cm version of a counting payload."""
        return self.cm_version

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
    layout = head.layout or LAYOUTS[head.version]
    body = MAGIC + bytes([head.version, kind]) + _varint(head.original_length) + struct.pack("<I", head.crc32)
    if head.counting:
        body += bytes([level_of(head)]) + (b"" if layout.cm else bytes([head.cm_version]))
        body += _varint(head.payload_length) if layout.length else b""
    return body + struct.pack("<I", zlib.crc32(body))


def frame(data: bytes, level: int | None, coded: bytes | None) -> tuple[bytes, Header]:
    """The frame of an input of one block: counted (``coded``: the cm stream, its own header dropped) or stored."""
    if coded is None:
        head = ShortHeader(len(data), crc32(data), stored=True, payload_length=len(data), version=13)
        payload = data
    else:
        from lmzip.cm import format as cmfmt

        payload, cm_version = coded[cmfmt.HEADER_BYTES :], coded[4]
        version = next((v for v, layout in LAYOUTS.items() if layout.cm == cm_version), VERSION)  # the oldest
        head = ShortHeader(len(data), crc32(data), counting=True, arith=versions.COUNTING, model_name=f"cm-{level}",
                           payload_length=len(payload), version=version, cm_version=cm_version)
    return pack(head) + payload, head


def parse_header(blob: bytes, layouts: dict[int, ShortLayout] = LAYOUTS) -> ShortHeader:
    """The header at the start of ``blob``, of a version in ``layouts``, checked (a payload without a
    recorded length: 0 for now)."""
    if len(blob) < 6:
        raise FormatError("truncated header")
    version = blob[4]
    if version not in layouts:
        raise FormatError(f"unsupported format version {version} of a short frame")
    layout = layouts[version]
    kind = blob[5]
    if kind not in (STORED, COUNTING):
        raise FormatError("unsupported short frame kind (written by a newer lmzip?)")
    length, at = _read_varint(blob, 6)
    end, payload = at + 4 + (kind == COUNTING) * (1 + (not layout.cm)), length
    if kind == COUNTING and layout.length:
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
        return ShortHeader(length, crc, stored=True, payload_length=length, version=version, layout=layout)
    level, cm_version = blob[at + 4], layout.cm or blob[at + 5]
    if not 1 <= level <= 9:
        raise FormatError(f"corrupt header (counting level {level})")
    if not layout.cm and cm_version <= IMPLIED_CM:
        raise FormatError(f"corrupt header (cm version {cm_version} in a version-{version} frame)")
    return ShortHeader(length, crc, counting=True, arith=versions.COUNTING, model_name=f"cm-{level}",
                       version=version, payload_length=payload if layout.length else 0, cm_version=cm_version,
                       layout=layout)


ToEnd = Callable[[Source, ShortHeader, bytes, Check | None], bytes]  # lmzip.coding.legacy.payload_to_end


def read(src: Source, start: bytes, check: Check | None = None, layouts: dict[int, ShortLayout] = LAYOUTS,
         to_end: ToEnd | None = None) -> tuple[ShortHeader, bytes]:
    """The short frame whose first bytes ``start`` were read already, of a version in ``layouts``: header
    and payload; what was read past its end is put back into ``src`` (another file may follow). A stored
    payload holds exactly the original's length; a counting one less (else it was stored); one whose
    length the version does not record is found by ``to_end`` (lmzip.coding.legacy)."""
    blob = start + read_full(src, max(0, MAX_HEADER - len(start)))
    head = parse_header(blob, layouts)
    if head.counting and not layouts[head.version].length:
        if to_end is None:
            raise ValueError("a payload that runs to the end of the file needs to_end")
        return head, to_end(src, head, blob[head.size :], check)
    want = head.payload_length
    payload = blob[head.size : head.size + want]
    src.unread(blob[head.size + want :])
    payload += read_full(src, want - len(payload))
    if len(payload) < want:
        raise FormatError(f"truncated file ({len(payload)} of {want} payload bytes)")
    return head, payload


def cm_stream(head: ShortHeader, payload: bytes) -> bytes:
    """The lmzip.cm stream a counting short frame stands for (its header rebuilt from the frame's)."""
    from lmzip.cm import format as cmfmt

    return cmfmt.pack(level_of(head), head.original_length, head.crc32, head.counted_by) + payload

