"""The ordinary frame's header in formats 8-11: each version's `Layout`, read by lmzip.coding.header."""

from __future__ import annotations

from lmzip.coding.header import FLAG_COUNT, FLAG_LAST, LAYOUTS, Header, Layout

_FORMAT_8 = Layout(8, flags=Layout.flags & ~(FLAG_LAST | FLAG_COUNT), blocks=False, mix_level=False, mix_version=False,
                   match=True)
LEGACY_LAYOUTS = {
    8: _FORMAT_8,
    9: Layout(9, flags=Layout.flags & ~FLAG_COUNT, mix_level=False, mix_version=False, match=True),
    10: Layout(10, mix_level=False, mix_version=False, match=True),
    11: Layout(11, mix_version=False),  # counting of cm version 1 mixed in (lmzip.cm.mix1)
}
READS = {**LEGACY_LAYOUTS, **LAYOUTS}  # every version the reader takes: these and the current ones


def pack(head: Header) -> bytes:
    """The bytes of a header of format 8-11 (its ``version``): for tests and tools that craft old files."""
    return head.pack(LEGACY_LAYOUTS[head.version])
