"""Formats 8-11, which lmzip 0.3.0-0.7 wrote and every lmzip reads: what they laid out or coded otherwise
than format 12, in one room (as zstd keeps its old decoders in lib/legacy), so the current code knows
format 12 alone.

  8   one frame for the whole input (lmzip 0.3.0-0.4.0): no block fields, no last flag, and a coded
      payload may be longer than the input (nothing was stored instead)
  9   blocks (lmzip 0.5): a frame per block, its number and the block size after the model name
  10  frames coded by counting alone (the counting flag; lmzip 0.6)
  11  counting mixed in, bit by bit (lmzip 0.7): byte 7 the level mixed in, the models of cm version 1
      (lmzip.cm.mix1); format 12 records the version in byte 8
In 8-10 the mix flag means the token match model (`match`: an online model of repeated tokens that
reshapes the language model's counts), and byte 7 is reserved. The header parser reads them by their
`Layout`s (`frame`); the decoder runs the match model (`match`) where a header says so (Header.match). A
format-10 file may also be one short frame of version 10, whose counting payload runs to the end of the
file (`short`). lmzip.coding.format, the one dispatch, hands the parsers these layouts beside today's.
"""

from lmzip.coding.legacy.frame import LEGACY_LAYOUTS, READS, pack
from lmzip.coding.legacy.short import SHORT_LAYOUTS, SHORT_READS, payload_to_end

__all__ = ["LEGACY_LAYOUTS", "READS", "SHORT_LAYOUTS", "SHORT_READS", "pack", "payload_to_end"]
