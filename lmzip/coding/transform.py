"""Reversible preprocessing before tokenization (recorded as header flags).

CRLF: the training text has LF line ends, so a CRLF file makes the model pay for every "\\r"
(measured: alice29.txt 2.665 -> 2.279 bits per byte with the same model). When every "\\n" of
the input follows a "\\r", "\\r\\n" -> "\\n" is exactly reversible by "\\n" -> "\\r\\n"."""

from __future__ import annotations


def crlf_applies(data: bytes) -> bool:
    """True when every LF is part of a CRLF (and there is at least one)."""
    n = data.count(b"\n")
    return n > 0 and data.count(b"\r\n") == n


def to_lf(data: bytes) -> bytes:
    """CRLF -> LF (only call when crlf_applies)."""
    return data.replace(b"\r\n", b"\n")


def to_crlf(data: bytes) -> bytes:
    """The inverse of to_lf."""
    return data.replace(b"\n", b"\r\n")


def prepare(data: bytes, allow: bool = True) -> tuple[bytes, bool]:
    """The bytes to code and whether the CRLF transform was applied (checked to round-trip)."""
    if allow and crlf_applies(data):
        lf = to_lf(data)
        if to_crlf(lf) == data:
            return lf, True
    return data, False


def restore(data: bytes, crlf: bool) -> bytes:
    """Undo ``prepare``."""
    return to_crlf(data) if crlf else data
