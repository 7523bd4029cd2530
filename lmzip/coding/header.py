"""The header of an ordinary .lmz frame: its fields, its bytes, its checks (a short frame's: lmzip.coding.short).

A file is one or more frames, one per block of the input: some coded by a language model, with counting
mixed in (the mix flag, lmzip.coding.mix) or not, some by counting alone (lmzip.cm), some stored.
Blocks are cut at a fixed size that the header records, every block but the last is full, and each frame
is coded and checked on its own, so neither side holds more than a block. This module knows format 12,
the one lmzip writes; what formats 8-11 laid out otherwise is described in lmzip.coding.legacy, as a
`Layout` this parser reads them by. Versions 1-7 were machine-bound pre-releases (their probabilities
were float computations that another CPU could round differently); this reader refuses them with one
line that says how to decode them.

An input of one block that is stored or counted is one short frame instead (lmzip.coding.short).

The byte layout, field by field, is written once, in docs/format.md; tests/coding/test_format.py checks
its offsets and sizes against FIELDS and the structs below.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from lmzip.arith import versions
from lmzip.errors import FormatError

MAGIC = b"\x89LMZ"
SHORT_MAGIC = b"\x89LMz"  # version 10: a short frame (lmzip.coding.short)
VERSION = 12
PRE_RELEASE = range(1, 8)  # machine-bound formats, written by lmzip 0.1.0
FLAG_STORED = 0x01
FLAG_CRLF = 0x02
FLAG_MIX = 0x04
FLAG_ADAPT = 0x08
FLAG_SEED = 0x10
FLAG_LAST = 0x20
FLAG_COUNT = 0x40
OPTIMIZERS = {1: "adam"}
MIX_VERSIONS = (1, 9, 11, 26)  # the cm versions a mixed frame may run (lmzip.cm.mix.VERSIONS, which a test holds equal)
_ADAPT = struct.Struct("<BfH")  # optimizer, learning rate, block
_SEED = struct.Struct("<Q")
_BLOCK = struct.Struct("<II")  # version 9: block number, block size
_FIXED = struct.Struct("<4sBBBBBBBH QQI 16s QI B")  # 62 bytes
BLOCK_SIZE = 4 << 20  # the default block size (lmzip.coding.settings explains it)
# where each numeric field of the fixed part lies (offset, struct format): for tools that read or
# craft headers field by field (benchmarks/fuzz.py, the hostile-input tests)
FIELDS = {"flags": (5, "<B"), "arith": (6, "<B"), "groups": (11, "<H"), "original": (13, "<Q"),
          "payload": (21, "<Q"), "tokens": (49, "<Q"), "segment": (57, "<I"), "name_length": (61, "<B")}


@dataclass(frozen=True)
class Layout:
    """What one format version's ordinary header holds and how its fields read (format 12 here; formats
    8-11 in lmzip.coding.legacy)."""

    version: int
    flags: int = FLAG_STORED | FLAG_CRLF | FLAG_MIX | FLAG_ADAPT | FLAG_SEED | FLAG_LAST | FLAG_COUNT  # those it knows
    blocks: bool = True  # block number and size after the name (then a coded frame is shorter than its block)
    mix_level: bool = True  # byte 7: the counting level mixed in (else reserved, 0)
    mix_version: bool = True  # byte 8: the cm version mixed in (else reserved, 0: version 1 where a level is)
    match: bool = False  # the mix flag means the token match model (lmzip.coding.legacy.match)


CURRENT = Layout(VERSION)
LAYOUTS = {VERSION: CURRENT}  # the versions this module reads itself


@dataclass
class Header:
    """Everything the decoder needs besides the model weights."""

    original_length: int
    crc32: int
    stored: bool = False
    crlf: bool = False
    mix: bool = False  # counting mixed into the model, bit by bit (lmzip.coding.mix)
    model_id: bytes = bytes(16)
    model_name: str = ""
    n_tokens: int = 0
    segment_length: int = 0
    arith: int = 1
    payload_length: int = 0
    groups: int = 1
    adapt_optimizer: str = ""  # "" = no adaptation
    adapt_lr: float = 0.0
    adapt_steps: int = 0
    seed: int | None = None  # None = trained weights; else a preset with these random weights
    version: int = VERSION
    block: int = 0  # this frame's block number (version 9)
    block_size: int = BLOCK_SIZE  # the size every block but the last has (version 9; 0 in version 8: one block)
    last: bool = True  # no frame follows (version 9)
    counting: bool = False  # the payload is an lmzip.cm stream (version 10)
    short: bool = False  # a short frame (lmzip.coding.short.ShortHeader): the whole file, one stored or counted block
    mix_level: int = 0  # with mix: the counting level mixed in
    mix_version: int = 0  # with mix: the cm version mixed in (lmzip.cm.mix; format 11's frames: 1)
    match: bool = False  # formats 8-10: the token match model reshaped the counts (lmzip.coding.legacy)

    def __post_init__(self) -> None:
        if self.short:  # one block, as long as the input
            self.block, self.block_size, self.last = 0, max(1, self.original_length), True

    @property
    def adapt(self) -> bool:
        """Whether the model learned while coding."""
        return bool(self.adapt_optimizer)

    @property
    def n_segments(self) -> int:
        """How many segments were coded side by side."""
        if self.stored or self.n_tokens == 0 or self.segment_length == 0:
            return 0
        return -(-self.n_tokens // self.segment_length)

    def pack(self, layout: Layout = CURRENT) -> bytes:
        """The header bytes, its own CRC32 last (``layout``: another version's, lmzip.coding.legacy.pack)."""
        if layout.version != self.version:
            raise ValueError(f"a header of version {self.version} packs in its own layout (lmzip.coding.legacy.pack)")
        name = self.model_name.encode("utf-8")
        if len(name) > 255:
            raise ValueError("model name longer than 255 bytes")
        flags = ((FLAG_STORED if self.stored else 0) | (FLAG_CRLF if self.crlf else 0)
                 | (FLAG_MIX if self.mix or self.match else 0)
                 | (FLAG_ADAPT if self.adapt else 0) | (FLAG_SEED if self.seed is not None else 0)
                 | (FLAG_LAST if self.last and layout.blocks else 0) | (FLAG_COUNT if self.counting else 0))
        body = _FIXED.pack(
            MAGIC, layout.version, flags, self.arith, self.mix_level, self.mix_version if layout.mix_version else 0,
            0, 0, self.groups - 1, self.original_length,
            self.payload_length, self.crc32, self.model_id, self.n_tokens, self.segment_length, len(name),
        ) + name
        if layout.blocks:
            body += _BLOCK.pack(self.block, self.block_size)
        if self.adapt:
            body += _ADAPT.pack(_code(OPTIMIZERS, self.adapt_optimizer), self.adapt_lr, self.adapt_steps)
        if self.seed is not None:
            body += _SEED.pack(self.seed)
        return body + struct.pack("<I", zlib.crc32(body))

    @property
    def size(self) -> int:
        """Header length in bytes (as read: a frame of format 8 has no block fields, its block_size 0)."""
        return (_FIXED.size + len(self.model_name.encode("utf-8")) + (_BLOCK.size if self.block_size else 0)
                + (_ADAPT.size if self.adapt else 0) + (_SEED.size if self.seed is not None else 0) + 4)


def _code(table: dict[int, str], value: str) -> int:
    for k, v in table.items():
        if v == value:
            return k
    raise ValueError(f"cannot record {value!r} in the header")


def header_size(prefix: bytes, layouts: dict[int, Layout] = LAYOUTS) -> int:
    """The length of the header that starts ``prefix`` (at least its first 62 bytes), its CRC included,
    in one of ``layouts`` (by version)."""
    layout = _layout(prefix, layouts)
    if len(prefix) < _FIXED.size:
        raise FormatError("truncated header")
    flags, n = prefix[5], prefix[61]
    return (_FIXED.size + n + (_BLOCK.size if layout.blocks else 0) + (_ADAPT.size if flags & FLAG_ADAPT else 0)
            + (_SEED.size if flags & FLAG_SEED else 0) + 4)


def _layout(blob: bytes, layouts: dict[int, Layout]) -> Layout:
    """The layout of the version ``blob`` names, or the one line that says why it cannot be read."""
    if len(blob) < 4 or blob[:4] != MAGIC:
        raise FormatError("not an lmzip file (bad magic)")
    if len(blob) < 5:
        raise FormatError("truncated header")
    if blob[4] in PRE_RELEASE:
        raise FormatError(f"written by a pre-release lmzip, format {blob[4]}: decode it with lmzip 0.1.0 "
                          "on the machine that wrote it")
    if blob[4] not in layouts:
        raise FormatError(f"unsupported format version {blob[4]} (this lmzip reads versions "
                          f"{min(layouts)} to {max(layouts)})")
    return layouts[blob[4]]


def parse_header(blob: bytes, layouts: dict[int, Layout] = LAYOUTS) -> Header:
    """Parse and check the ordinary header at the start of ``blob`` (the payload may follow, or not), of
    a version in ``layouts``."""
    layout = _layout(blob, layouts)
    end = header_size(blob, layouts) - 4
    if len(blob) < end + 4:
        raise FormatError("truncated header")
    (crc,) = struct.unpack_from("<I", blob, end)
    if zlib.crc32(blob[:end]) != crc:
        raise FormatError("corrupt header (header checksum mismatch)")
    _, version, flags, arith, *reserved, groups_m1, olen, plen, ocrc, mid, ntok, seg, n = _FIXED.unpack_from(blob)
    if flags & ~layout.flags:
        raise FormatError("unsupported header flags (written by a newer lmzip?)")
    if arith == 0:
        raise FormatError("a machine-bound --adapt file of lmzip 0.2.0 (float32 arithmetic): decode it with "
                          "lmzip 0.2.0 on the machine that wrote it")
    if arith not in versions.ARITHMETICS:
        raise FormatError(f"unsupported arithmetic version {arith} (written by a newer lmzip?)")
    if any(reserved[2:]) or reserved[0] and not layout.mix_level or reserved[1] and not layout.mix_version:
        raise FormatError("corrupt header (reserved bytes 7-10 are not 0)")
    try:
        name = blob[_FIXED.size : _FIXED.size + n].decode("utf-8")
    except UnicodeDecodeError as e:
        raise FormatError("corrupt header (model name is not UTF-8)") from e
    mix = bool(flags & FLAG_MIX)
    h = Header(olen, ocrc, bool(flags & FLAG_STORED), bool(flags & FLAG_CRLF), mix and not layout.match, mid, name,
               ntok, seg, arith, payload_length=plen, groups=groups_m1 + 1, version=version, block_size=0,
               counting=bool(flags & FLAG_COUNT), mix_level=reserved[0], match=mix and layout.match,
               mix_version=reserved[1] if layout.mix_version else int(bool(reserved[0])))
    at = _FIXED.size + n
    if layout.blocks:
        h.block, h.block_size = _BLOCK.unpack_from(blob, at)
        if h.block_size == 0:  # (0 stands for "no blocks", format 8's, which this layout has not)
            raise FormatError("corrupt header (a block longer than the block size)")
        h.last = bool(flags & FLAG_LAST)
        at += _BLOCK.size
    if flags & FLAG_ADAPT:
        opt, h.adapt_lr, h.adapt_steps = _ADAPT.unpack_from(blob, at)
        if opt not in OPTIMIZERS or h.adapt_steps == 0 or not 0 < h.adapt_lr < float("inf"):
            raise FormatError("unsupported adaptation settings in the header (written by a newer lmzip?)")
        h.adapt_optimizer = OPTIMIZERS[opt]
    if flags & FLAG_SEED:
        (h.seed,) = _SEED.unpack_from(blob, end - _SEED.size)
    _check_fields(h)
    return h


def _check_fields(h: Header) -> None:
    """Fields that contradict each other (a crafted or damaged header with a recomputed CRC)."""
    if (h.mix_level or h.mix_version) and (h.stored or h.counting or not h.mix):
        raise FormatError("corrupt header (a counting level mixed in without the mix flag)")
    if h.block_size:  # a frame with blocks (every format but 8)
        if h.block_size == 0 or h.original_length > h.block_size:
            raise FormatError("corrupt header (a block longer than the block size)")
        if not h.last and h.original_length != h.block_size:
            raise FormatError("corrupt header (a block before the last that is not full)")
    if h.stored:
        if h.payload_length != h.original_length:
            raise FormatError("corrupt header (stored payload length differs from the original length)")
        return
    if h.block_size and h.payload_length >= h.original_length:  # the encoder stores what coding would not shrink
        raise FormatError("corrupt header (a coded payload as long as the original)")
    if h.counting or h.arith == versions.COUNTING:
        model_flags = h.mix or h.match or h.adapt or h.seed is not None or h.crlf
        if not (h.counting and h.arith == versions.COUNTING) or model_flags:
            raise FormatError("corrupt header (a counting frame with a model's flags or arithmetic)")
        if h.n_tokens or h.segment_length or h.groups != 1 or any(h.model_id):
            raise FormatError("corrupt header (a counting frame with tokens or a model)")
        return
    if h.n_tokens == 0 or h.segment_length == 0:
        raise FormatError("corrupt header (a coded file with no tokens or zero segment length)")
    if h.mix and not 1 <= h.mix_level <= 9:
        raise FormatError("corrupt header (the counting level mixed in does not match the mix flag)")
    if h.mix and h.mix_version not in MIX_VERSIONS:
        raise FormatError(f"unsupported cm version {h.mix_version} mixed in (this lmzip mixes in versions "
                          f"{', '.join(map(str, MIX_VERSIONS))}; written by a newer lmzip?)")
    if h.n_tokens > h.original_length:  # every token stands for at least one byte
        raise FormatError("corrupt header (more tokens than original bytes)")
    if h.adapt != (versions.ARITHMETICS[h.arith].learns is not None):
        raise FormatError("corrupt header (the arithmetic does not match the adapt flag)")
    if h.groups > h.n_segments:
        raise FormatError("corrupt header (more groups than segments)")


def decode_memory(h: Header) -> int:
    """Bytes the decoder will hold besides the model: the token grid (int64), its copy per segment,
    and the output three times over (detokenized, CRLF restored, checked)."""
    if h.stored:
        return 0
    if h.counting:  # the output twice; the tables, set by the stream's level, are counted by the codec
        return 2 * h.original_length
    return 16 * h.n_segments * h.segment_length + 3 * h.original_length


def crc32(data: bytes) -> int:
    """The checksum recorded for the original bytes."""
    return zlib.crc32(data) & 0xFFFFFFFF
