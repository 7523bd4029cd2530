"""Version 12's sparse models: contexts of bytes further back with the ones between skipped or cut, where a file's
structure is 16- or 32-bit words (a machine's instructions, samples, fields of records) rather than bytes in a row.
calgary/obj2 (68000 code) was 1.7% smaller with them over benchmarks/cm_sample.py's sample, the sample 0.10%."""

from __future__ import annotations

from numba import njit

from lmzip.cm.parts import hash2


@njit(cache=True, inline="always")
def sparse_contexts(ctx, c4):
    """ctx[42:46] from the last four bytes ``c4``: bytes 1 and 3 back; bytes 2 and 4 back; the high nibbles of all four;
    bytes 1 and 4 back."""
    ctx[42] = hash2(c4 & 0xFF00FF, 60)
    ctx[43] = hash2(c4 & 0xFF00FF00, 61)
    ctx[44] = hash2(c4 & 0xF0F0F0F0, 62)
    ctx[45] = hash2(c4 & 0xFF0000FF, 63)
