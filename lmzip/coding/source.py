"""Reading frames from a stream: whole reads from pipes, and bytes put back where another file may follow."""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from lmzip.coding.header import Header

READ_CHUNK = 1 << 20  # payloads are read in pieces: a hostile length never allocates more than it finds


def read_full(src: BinaryIO, n: int) -> bytes:
    """Up to ``n`` bytes, fewer only at the end of the input (pipes return short reads)."""
    parts, got = [], 0
    while got < n:
        b = src.read(min(n - got, READ_CHUNK))
        if not b:
            break
        parts.append(b)
        got += len(b)
    return b"".join(parts)


class Source:
    """A stream that bytes read past a frame's end can be put back into (another file may follow)."""

    def __init__(self, src: BinaryIO):
        self.src, self.back = src, b""

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes (all with -1): the put-back ones first."""
        if not self.back:
            return self.src.read(n)
        take = self.back if n < 0 else self.back[:n]
        self.back = self.back[len(take) :]
        return take + (self.src.read() if n < 0 else b"")

    def unread(self, data: bytes) -> None:
        """Put ``data`` back: the next read returns it first."""
        self.back = data + self.back


Check = Callable[[Header, bytes], "int | None"]  # a format-10 short frame's payload length (lmzip.coding.short)
