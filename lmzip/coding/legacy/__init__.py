"""Formats 8-10, which lmzip 0.3.0-0.6 wrote and every lmzip reads: what they laid out or coded otherwise
than format 11, in one room (as zstd keeps its old decoders in lib/legacy), so the current code knows
format 11 alone.

  8   one frame for the whole input (lmzip 0.3.0-0.4.0): no block fields, no last flag, and a coded
      payload may be longer than the input (nothing was stored instead)
  9   blocks (lmzip 0.5): a frame per block, its number and the block size after the model name
  10  frames coded by counting alone (the counting flag; lmzip 0.6)
In all three the mix flag means the token match model (`match`: an online model of repeated tokens that
reshapes the language model's counts), and byte 7 is reserved. The header parser reads them by their
`Layout`s below; the decoder runs the match model where a header says so (Header.match). A format-10
file may also hold a short frame of version 10 (lmzip.coding.short: its counting payload runs to the end
of the file).
"""

from __future__ import annotations

from lmzip.coding.header import FLAG_COUNT, FLAG_LAST, LAYOUTS, Header, Layout

_FORMAT_8 = Layout(8, flags=Layout.flags & ~(FLAG_LAST | FLAG_COUNT), blocks=False, mix_level=False, match=True)
LEGACY_LAYOUTS = {
    8: _FORMAT_8,
    9: Layout(9, flags=Layout.flags & ~FLAG_COUNT, mix_level=False, match=True),
    10: Layout(10, mix_level=False, match=True),
}
READS = {**LEGACY_LAYOUTS, **LAYOUTS}  # every version the reader takes: these and the current ones


def pack(head: Header) -> bytes:
    """The bytes of a header of format 8-10 (its ``version``): for tests and tools that craft old files."""
    return head.pack(LEGACY_LAYOUTS[head.version])
