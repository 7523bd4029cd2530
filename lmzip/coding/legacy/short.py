"""The short frame of format 10: a counting payload without its length, which runs to the end of the file.

The reader finds where it ends by decoding it and coding the bytes again (counting is deterministic: the
same bytes the encoder wrote), so a file after it is read as one, and bytes after it that begin no file
are an error.
"""

from __future__ import annotations

from lmzip.coding import short
from lmzip.coding.header import parse_header
from lmzip.coding.legacy.frame import READS
from lmzip.coding.short import ShortHeader, ShortLayout
from lmzip.coding.source import Check, Source, read_full
from lmzip.errors import FormatError

SHORT_LAYOUTS = {10: ShortLayout(10, length=False, cm=1)}
SHORT_READS = {**SHORT_LAYOUTS, **short.LAYOUTS}  # every short-frame version the reader takes
MAX_CUTS = 8  # a frame followed by more bytes: the most places tried where the next file may start


def payload_to_end(src: Source, head: ShortHeader, payload: bytes, check: Check | None) -> bytes:
    """A version-10 counting payload, which records no length: where it ends, found by ``check`` (which
    decodes the frame and codes the bytes again: the very payload the encoder wrote), on the bytes up to
    the original's length or, where those do not decode, up to where another file's magic begins;
    without ``check`` (listing headers), the end of the file or the first such magic."""
    want = max(0, head.original_length - 1)  # bytes read past this would make the frame "as long as the original"
    payload += read_full(src, max(0, want - len(payload)))
    more = src.read(1)
    src.unread(more)
    cuts = [i for i in range(1, len(payload) - 3) if payload[i : i + 4] in short.MAGICS][:MAX_CUTS]
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
        short.parse_header(blob, SHORT_READS) if blob[:4] == short.MAGIC else parse_header(blob, READS)
    except FormatError as e:
        return "truncated header" in str(e)
    return True


