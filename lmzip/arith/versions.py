"""Every arithmetic a .lmz header can name, in one table: how its counts are made (the operands'
quantization, whether the model learned while coding, whether a full Transformer window shifts) and
what `lmzip info` calls it. The header (lmzip.coding.header), the settings and the exact predictors
(lmzip.models.qmodel) read this table; nothing else numbers an arithmetic. Imports nothing (no torch),
so the container reads it too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Quant:
    """How one arithmetic quantizes the operands of its matrix products."""

    wq: int  # weights: per output channel, integers in ±wq
    act: int  # activations: per token (row), integers in ±act
    chunk: int  # terms per float32 partial sum: wq * act * chunk < 2^24, so it is always exact
    int8: bool  # operands fit int8 and no backend's pairwise int16 sum saturates (lmzip.arith.exact, rule 1)


# 8-bit weights, 9-bit activations, float32 products only (lmzip 0.3.0-0.4.0)
Q9 = Quant(wq=127, act=255, chunk=512, int8=False)
# 7-bit weights, 8-bit activations: int8 products; costs under 0.05% in size (benchmarks/results/)
Q8 = Quant(wq=63, act=127, chunk=2048, int8=True)
for _q in (Q9, Q8):
    assert _q.wq * _q.act * _q.chunk < 1 << 24
assert 255 * Q8.wq * 2 < 1 << 15 and Q8.act <= 127


@dataclass(frozen=True)
class Arithmetic:
    """One arithmetic: the recipe of the counts a file's decoder must compute again."""

    words: str  # as `lmzip info` names it
    quant: Quant | None  # None: counting alone (lmzip.cm), no network
    learns: int | None = None  # learning while coding (lmzip.arith.detfloat): the arithmetic of its counts
    shifts: bool = False  # a full Transformer window shifts by half (lmzip.models.qmodel), else it re-primes


_LEARNING_V1 = "learning in deterministic float64 v1"
_LEARNING_V2 = "learning in deterministic float64 v2 (int8 products)"
ARITHMETICS: dict[int, Arithmetic] = {
    1: Arithmetic("exact integer v1", Q9),  # lmzip 0.3.0-0.4.0
    2: Arithmetic(f"exact integer v1, {_LEARNING_V1}", Q9, learns=1),
    3: Arithmetic("exact integer v3 (int8)", Q8),  # lmzip 0.5.0-0.7.0
    4: Arithmetic(f"exact integer v3 (int8), {_LEARNING_V2}", Q8, learns=3),
    5: Arithmetic("counting context mixing v1 (integer)", None),
    6: Arithmetic("exact integer v3 (int8), the window shifted", Q8, shifts=True),
    7: Arithmetic(f"exact integer v3 (int8), the window shifted, {_LEARNING_V2}", Q8, learns=6, shifts=True),
}
COUNTS = 6  # what new files' models compute
COUNTING = 5  # counting frames (lmzip.cm)
LEARNING = {a.learns: n for n, a in ARITHMETICS.items() if a.learns is not None}  # counts -> learning in them
