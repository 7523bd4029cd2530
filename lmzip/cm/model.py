"""Counting's model and its coding loop: one compiled function codes a whole stream.

Per bit, every model of `body` offers two stretched probabilities (the run model one); four mixers (weight sets
chosen by the partial byte, by match state x how many high orders know this context x bit position, by the previous
byte, by the byte before it; version 3 adds a fifth, by the last two bytes) combine them (version 5: a weight set
learns faster while it is young, by its count of uses; version 6 adds a sixth, by the partial byte x the last two
bytes' types x the word's length, and learns slower once past the first 64 KiB; version 7 adds four column models to
`body`; version 8's image model picks the sixth mixer's set, the final mixer's and the order-2 APM's context where
it is on; version 9 looks contexts up in four buckets, not two; version 10 gives each model a third input, its
state's p where its slot never wavered; version 13 adds two group mixers, each over one group of inputs: the models
from 7 on, the orders; version 17 two by the text's shape and spacing, `lmzip.cm.text.shape_set`), a final mixer
(sets by match/orders state; version 13 averages a second set's output in, by the partial byte, version 14 two more,
by the previous byte and the one before; version 16 picks the first set by the misses too) combines those, three APM
stages (order 1, order 2, match state; version 6 updates both buckets each reads; version 16 adds a fourth, by the
partial byte x the misses: `mixers.misses`) refine the result, and the arithmetic coder spends -log2(p) bits on the
bit actually seen. Encoding and decoding run this very loop (`encode` picks which coder step is called), so the two
sides cannot drift apart: the decoder rebuilds every table from the bytes it has already emitted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from lmzip.cm import jitcache  # noqa: F401 - first: clears a stale compiled loop before numba loads it
from lmzip.cm.body import bucket_ask, bucket_find, state_ask
from lmzip.cm.clauses import AT as CLAUSES_AT
from lmzip.cm.coder import decode_bit, encode_bit, flush, new_state, start_decoder
from lmzip.cm.fields import AT as FIELDS_AT
from lmzip.cm.format import CALIBRATED, LEAN, MISSES, ORDER0, PRIMED, SETTLED, SHAPES, SIZED, version_for
from lmzip.cm.groups import AT as GROUPS_AT
from lmzip.cm.history import C4, N_STATE, TYPES, W0
from lmzip.cm.image import FLAT, IMAGE_BITS
from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.loop import (
    GROUP_SETS,
    N_SETS,
    SHAPE_SETS,
    bit_inputs,
    bit_learn,
    bit_mix,
    bit_sets,
    byte_ask,
    byte_end,
    byte_sets,
    group_bounds,
    mixed_learn,
    scratch,
    span_of,
)
from lmzip.cm.match import EBYTE_BITS
from lmzip.cm.mixers import (
    APM2_BITS,
    APM3_CTX,
    FINAL_SETS,
    MISS_APM,
    MISS_SETS,
    final_rate,
    first_rate,
    refine,
    refine_ask,
    slower,
)
from lmzip.cm.orders import AT as ORDERS_AT
from lmzip.cm.parts import SLOT_INIT, apm_init, clamp_p, sq
from lmzip.cm.primers import LONGEST
from lmzip.cm.run import RUN_STATES, n_ind, run_start
from lmzip.cm.sizes import FULL, KEEP, n_contexts, n_ebyte, n_hashed, n_image, n_inputs, n_long, n_run, n_ways, sm_shape
from lmzip.cm.sse import ENTRIES, FIRST, STAGES, counts_init, has_tail, tail_ask, tail_learn, tail_p
from lmzip.cm.text import LONG_STATES

FIT = 4  # cm version 15: a model's hashed slots at most 2^(the length's bits + FIT), 16 to 32 a byte; 23: 8 to 16
N_MIX = 4              # first-layer mixers (3: 5, 6: 6, 13: 8, 17: 10); the final mixer weighs them (sets by SET_ST)


@dataclass(frozen=True)
class Tables:
    """Every array the model owns; its size is fixed by the level (from cm version 15 and the input's length too: see
    `allocate`)."""

    ht: np.ndarray
    t01: np.ndarray
    sm: np.ndarray
    w1: np.ndarray
    wf: np.ndarray
    apm1: np.ndarray
    apm2: np.ndarray
    apm3: np.ndarray
    mtab: np.ndarray
    msm: np.ndarray
    it: np.ndarray  # the image model's (version 2; no rows in version 1)
    rsm: np.ndarray  # the run model's state maps (version 3; no rows before)
    ind: np.ndarray  # the indirect models' histories (version 3; empty before)
    em: np.ndarray  # the expected-byte model's entries (version 4; empty before)
    ltab: np.ndarray  # the long match model's table (version 5; empty before)
    lsm: np.ndarray  # its state map (version 5; empty before)
    ways: int = 2  # the candidate buckets of a lookup (version 9: 4, `n_ways`)
    start: int = 0  # w1's start weight where its rows start as zeros and take it when first chosen (0: filled)
    span: int = 0  # the contexts the per-byte machinery computes (lmzip.cm.sizes.n_contexts; version 26: > ht's rows;
    # 0: as many as ht has rows)
    settled: bool = False  # version 27 (SETTLED): fresh weight sets start from the state's; text models quiet on images

    def __post_init__(self) -> None:
        """A table made without ``span`` (lmzip.cm.mix1's) computes a context per row of ``ht``."""
        if self.span == 0:
            object.__setattr__(self, "span", self.ht.shape[0])

    @property
    def arrays(self) -> tuple:
        """Every table, in the order the loop takes them."""
        return (self.ht, self.t01, self.sm, self.w1, self.wf, self.apm1, self.apm2, self.apm3, self.mtab, self.msm,
                self.it, self.rsm, self.ind, self.em, self.ltab, self.lsm)

    @property
    def nbytes(self) -> int:
        """Bytes allocated by all the tables together."""
        return sum(a.nbytes for a in self.arrays)


def table_bits(level: int, version: int = 1, length: int | None = None) -> tuple[int, int]:
    """(log2 slots per hashed table, log2 match-table entries) for a level 1..9; from cm version 15 (SIZED) the hashed
    table also fits an input of ``length`` bytes (None: the level's largest), 2^(its bits + FIT) slots a model, no
    fewer than level 1's: a small input no longer fills gigabytes it cannot use; from version 23 (LEAN) 2^(its bits +
    FIT - 1): half that."""
    tb, mb = 15 + level, 13 + level
    if version >= SIZED and length is not None:
        tb = min(tb, max(16, length.bit_length() + FIT - (version >= LEAN)))
    return tb, mb


def n_mix(version: int) -> int:
    """The first-layer mixers of a cm version."""
    return N_MIX + (version >= 3) + (version >= 6) + 2 * (version >= 13) + 2 * (version >= SHAPES)


def n_sets(version: int) -> int:
    """The first-layer mixers' weight sets of a cm version."""
    groups = GROUP_SETS + 65536 if version >= 13 else 0  # the group mixers' (lmzip.cm.loop.SET_GROUP)
    shapes = SHAPE_SETS if version >= SHAPES else 0  # version 17's shape and spacing mixers' (SET_SHAPE)
    return N_SETS + (65536 if version >= 3 else 0) + (65536 if version >= 6 else 0) + groups + shapes


def n_final(version: int) -> int:
    """The final mixer's weight sets of a cm version: by match/orders state (or the image model's; version 16 x the
    misses), version 13 by the partial byte too, version 14 by the previous byte and by the one before it too
    (lmzip.cm.mixers.final_sets)."""
    if version >= MISSES:
        return FINAL_SETS * (MISS_SETS + 3)
    return FINAL_SETS * (1 if version < 13 else 2 if version < 14 else 4)


def apm3_contexts(version: int) -> int:
    """The match-state APM stage's contexts, version 16's misses stage after them (lmzip.cm.mixers.refine)."""
    return APM3_CTX + (MISS_APM if version >= MISSES else 0)


def apm3_table(version: int) -> np.ndarray:
    """The match-state stage's table: its contexts and the misses stage's as identity maps; from version 22
    (CALIBRATED) the three stages of lmzip.cm.sse after them, then the calibration's counts."""
    if version < CALIBRATED:
        return apm_init(apm3_contexts(version))
    return np.concatenate((apm_init(FIRST + STAGES), counts_init()))


def first_weight(version: int) -> int:
    """Every first-layer weight's starting value (16 fractional bits): 1/16; from cm version 15 (SIZED) 1/32, so ~170
    inputs do not start out summed into a near-certain mix (-0.35% on files' first 32 KiB, -0.15% over the sample)."""
    return 1 << 11 if version >= SIZED else 1 << 12


def table_bytes(level: int, version: int | None = None, length: int | None = None) -> int:
    """The memory the tables of a level take (in cm ``version``, else the level's; for an input of ``length`` bytes,
    None: the largest), computed from the sizes alone."""
    version = version_for(level) if version is None else version
    if version == ORDER0:  # lmzip.cm.order0: its 256 x 2 counts
        return 4096
    if version == PRIMED and length is not None:  # the primer's bytes are the history's first (lmzip.cm.primers)
        length += LONGEST
    tb, mb = table_bits(level, version, length)
    return (4 * (n_hashed(version) << tb) + 4 * 2 * 65536 + 4 * int(np.prod(sm_shape(version)))
            + 4 * n_inputs(version) * n_sets(version) + 4 * n_final(version) * (n_mix(version) + 1)
            + 4 * 33 * (65536 + (1 << APM2_BITS) + apm3_contexts(version)) + 4 * (1 << mb) + 4 * 64
            + 4 * ENTRIES * (version >= CALIBRATED)
            + 4 * (n_image(version) << IMAGE_BITS) + 4 * RUN_STATES * n_run(version)
            + 2 * n_ind(version) + 4 * (n_ebyte(version) << EBYTE_BITS)
            + (4 * (1 << mb) + 4 * LONG_STATES) * (n_long(version) > 0))


def allocate(level: int, version: int | None = None, length: int | None = None) -> Tables:
    """Fresh tables for a level and cm version (else the level's) and an input of ``length`` bytes (`table_bits`):
    every probability 1/2, first-layer weights `first_weight`, APMs the identity."""
    version = version_for(level) if version is None else version
    if version == ORDER0:
        raise ValueError(f"cm version {ORDER0} (lmzip.cm.order0) has no tables")
    tb, mb = table_bits(level, version, length)
    half = np.uint32((1 << 21) << 10)  # p = 1/2 with count 0 for the state maps
    lazy = n_long(version) > 0  # version 5 on counts each weight set's uses: a row never chosen is never touched
    return Tables(
        ht=np.full((n_hashed(version), 1 << tb), SLOT_INIT, dtype=np.uint32),
        t01=np.full((2, 65536), SLOT_INIT, dtype=np.uint32),
        sm=np.full(sm_shape(version), half, dtype=np.uint32),
        w1=np.zeros((n_sets(version), n_inputs(version)), dtype=np.int32) if lazy
        else np.full((n_sets(version), n_inputs(version)), first_weight(version), dtype=np.int32),
        wf=np.full((n_final(version), n_mix(version) + 1), 65536 // n_mix(version), dtype=np.int32),
        apm1=apm_init(65536),
        apm2=apm_init(1 << APM2_BITS),
        apm3=apm3_table(version),
        mtab=np.zeros(1 << mb, dtype=np.int32),
        msm=np.full(64, half, dtype=np.uint32),
        it=np.full((n_image(version), 1 << IMAGE_BITS), half, dtype=np.uint32),
        rsm=np.full((n_run(version), RUN_STATES), half, dtype=np.uint32),
        ind=np.zeros(n_ind(version), dtype=np.uint16),
        em=np.full(n_ebyte(version) << EBYTE_BITS, half, dtype=np.uint32),
        ltab=np.zeros((1 << mb) if n_long(version) else 0, dtype=np.int32),
        lsm=np.full(LONG_STATES if n_long(version) else 0, half, dtype=np.uint32),
        ways=n_ways(version),
        start=first_weight(version) if lazy else 0,
        span=n_contexts(version),
        settled=version >= SETTLED,
    )


# Inputs an ablation can switch off (benchmarks/ablation.py; files never do): bits of `off`
OFF_ORDERS, OFF_WORDS, OFF_SPARSE, OFF_RECORDS, OFF_MATCH, OFF_SSE = 1, 2, 4, 8, 16, 32
OFF_IMAGE = 64  # version 2's
OFF_RUN, OFF_INDIRECT = 128, 256  # version 3's (its fifth mixer stays)
OFF_CLAUSES = 512  # versions 19-20's clauses, line key and letters (lmzip.cm.clauses, lmzip.cm.letters)
OFF_GROUPS = 1024  # version 24's character groups (lmzip.cm.groups)
OFF_FIELDS = 2048  # version 25's field and phrase contexts (lmzip.cm.fields)
# version 27: the inputs silent where the image model is on (bilevel images: pixels, not text; its order, record,
# run, match and image inputs stay)
ON_IMAGES = OFF_WORDS | OFF_INDIRECT | OFF_CLAUSES | OFF_GROUPS | OFF_FIELDS


def _mask(off: int, t: Tables, silence: tuple[int, ...] = ()) -> np.ndarray:
    """Each mixer input's factor for the ablation ``off`` and the hashed models (rows of ``ht``) in ``silence``: 0
    silences an input (the mixers then ignore it)."""
    for k in silence:
        if not 0 <= k < t.ht.shape[0]:
            raise ValueError(f"hashed model {k} is not one of this version's 0-{t.ht.shape[0] - 1}")
    rows = t.ht.shape[0]
    if t.span == rows:
        return _mask_rows(off, t, rows, silence)
    # version 26: the mask of version 25's inputs, then the inputs of the models it keeps (KEEP)
    models = [0, 1] + [k + 2 for k in KEEP]
    wide = _mask_rows(off, t, FULL, tuple(KEEP[k] for k in silence))
    n = t.w1.shape[1] + 3 * (FULL - rows) - (FULL + 2)  # version 25's inputs less its third ones
    rest = list(range(2 * (FULL + 2), n))  # the image, run, long match, expected-byte and match inputs, the bias
    at = [i for m in models for i in (2 * m, 2 * m + 1)] + rest + [n + m for m in models]
    return wide[np.array(at)]


def _mask_rows(off: int, t: Tables, rows: int, silence: tuple[int, ...]) -> np.ndarray:
    """`_mask` for a version with ``rows`` hashed models, every one of them looked up (before version 26 all)."""
    models = rows + 2
    width = t.w1.shape[1] + 3 * (rows - t.ht.shape[0])  # version 26: as wide as version 25's rows ask
    n = width - (models if rows > 30 else 0)  # version 10's third inputs follow the bias
    spans = [(OFF_ORDERS, 0, 14), (OFF_WORDS, 14, 18), (OFF_SPARSE, 18, 22), (OFF_RECORDS, 22, 28),
             (OFF_MATCH, n - 3, n - 1)]
    if models > 14:  # version 2: the third word, the image model
        spans += [(OFF_WORDS, 28, 30), (OFF_IMAGE, 2 * models, 2 * models + t.it.shape[0])]
    if models > 15:  # version 3: the indirect models, the run model
        x_run = 2 * models + t.it.shape[0]
        spans += [(OFF_INDIRECT, 30, 34), (OFF_RUN, x_run, x_run + t.rsm.shape[0])]
    if t.em.shape[0]:  # version 4: the expected-byte model goes with the match model; the word and line models
        spans += [(OFF_MATCH, n - 4, n - 3), (OFF_WORDS, 34, 38), (OFF_RECORDS, 38, 40)]
    if t.lsm.shape[0]:  # version 5: the long match model goes with the match model; the text models
        spans += [(OFF_MATCH, n - 6, n - 4), (OFF_WORDS, 40, 54), (OFF_RECORDS, 54, 56)]
    if models > 28:  # version 7: the column models go with the records
        spans += [(OFF_RECORDS, 56, 64)]
    if models > 40:  # version 10: the words further back; the token-indirect models (version 11: word-indirect)
        spans += [(OFF_WORDS, 64, 80), (OFF_INDIRECT, 80, min(88, 2 * models))]
    if models > 44:  # version 12: four more sparse models
        spans += [(OFF_SPARSE, 88, 96)]
    if models > 48:  # version 17: the number model goes with the words
        spans += [(OFF_WORDS, 96, 98)]
    if models > ORDERS_AT + 2:  # version 18: orders 6 and 12 with the orders
        spans += [(OFF_ORDERS, 2 * (ORDERS_AT + 2), 2 * (ORDERS_AT + 4))]
    if models > CLAUSES_AT + 2:  # version 19: the clauses; version 20: the line key and the letters
        spans += [(OFF_CLAUSES, 2 * (CLAUSES_AT + 2), 2 * min(models, GROUPS_AT + 2))]
    if models > GROUPS_AT + 2:  # version 24: the character groups
        spans += [(OFF_GROUPS, 2 * (GROUPS_AT + 2), 2 * min(models, FIELDS_AT + 2))]
    if models > FIELDS_AT + 2:  # version 25: the field and phrase contexts
        spans += [(OFF_FIELDS, 2 * (FIELDS_AT + 2), 2 * models)]
    mask = np.ones(width, dtype=np.int64)
    for bit, a, b in spans:
        if off & bit:
            mask[a:b] = 0
    for k in silence:  # hashed model k is model k + 2 (orders 0 and 1 come first)
        mask[2 * k + 4 : 2 * k + 6] = 0
    if width > n:  # version 10: each model's third input goes with its first two
        mask[n : n + models] = mask[0 : 2 * models : 2]
    return mask


def run(encode: bool, src: np.ndarray, n: int, t: Tables, off: int = 0, marks: np.ndarray | None = None,
        silence: tuple[int, ...] = (), primer: np.ndarray | None = None) -> np.ndarray:
    """Encode src (n bytes) to a payload, or decode n bytes from the payload src (``off``: inputs
    silenced for an ablation, OFF_* bits, and ``silence``: hashed models, rows of ``ht``, silenced one by one; none
    in any file; ``marks``, K int64s: the encoder records there the payload's length after every K-th part of the
    input, its cost profile; ``primer``: bytes the models run over first, learning, none coded: cm version 29)."""
    marks = np.zeros(0, dtype=np.int64) if marks is None else marks
    st = new_state()
    first = 0 if primer is None else len(primer)
    if encode:  # the loop reads the input as its history; the decoder fills its history as it goes
        buf, src = np.array(src[:n], dtype=np.uint8), np.zeros(1, dtype=np.uint8)
    else:
        buf, src = np.empty(n, dtype=np.uint8), np.array(src, dtype=np.uint8)  # writable: one compiled loop
    if first:  # the primer's bytes are the history's first, learnt from but not coded
        buf = np.concatenate((np.asarray(primer, dtype=np.uint8), buf))
    masked, no_sse, mask = bool(off & ~OFF_SSE) or bool(silence), bool(off & OFF_SSE), _mask(off, t, silence)
    out = np.empty(n // 2 + 1024, dtype=np.uint8) if encode else buf
    if not encode:
        start_decoder(st, src)
    work = scratch(t.w1, t.wf, t.ht, t.it, t.rsm, t.ltab, group_bounds(t.wf.shape[1] - 1, t.ht.shape[0] + 2),
                   np.array([t.start], dtype=np.int64), t.span)
    # the stream's history (lmzip.cm.body; its bytes in buf), where each byte value was last seen (+1) and the
    # distance between its last two sightings (the record model's), the image model's gate (lmzip.cm.image)
    hist = (np.zeros((1, N_STATE), dtype=np.int64), np.zeros(256, dtype=np.int64), np.zeros(256, dtype=np.int64),
            np.zeros(4, dtype=np.int64))
    at = np.array([0, 0, (n + len(marks) - 1) // max(1, len(marks)), first], dtype=np.int64)  # the next byte, mark,
    # its byte, the first byte coded
    how = (mask, masked, no_sse, _mask(ON_IMAGES, t), t.settled)
    while True:
        used = _code(encode, src, buf, first + n, st, t.arrays, how, marks, t.ways, (work, out, hist, at))
        if at[0] == first + n:
            return out[:used] if encode else buf[first:]
        out = np.concatenate((out, np.empty(len(out) + 1024, dtype=np.uint8)))  # the encoder's output is full


@njit(cache=True, inline="always")
def _mark(marks, k_mark, next_mark, i, n, used):
    """The cost profile (encoding): the payload's length ``used`` recorded at every mark byte ``i + 1`` passed;
    returns the next mark and its byte count."""
    while k_mark < marks.shape[0] and i + 1 >= next_mark:
        marks[k_mark] = used
        k_mark += 1
        next_mark = ((k_mark + 1) * n + marks.shape[0] - 1) // marks.shape[0]
    return k_mark, next_mark


@njit(cache=True, inline="always")
def _code_bit(encode, st, out, src, buf, i, j, p, first):
    """Bit ``j`` of byte ``i`` coded with probability ``p`` (encoding: read from ``buf``; decoding: from ``src``; a
    primer's byte, before ``first``: read from ``buf``, not coded)."""
    if i < first:
        return (np.int64(buf[i]) >> (7 - j)) & 1
    if encode:
        y = (np.int64(buf[i]) >> (7 - j)) & 1
        encode_bit(st, out, y, p)
        return y
    return decode_bit(st, src, p)


@njit(**UNCOUNTED)
def _code(encode, src, buf, n, st, tables, how, marks, ways, state):
    """Code bytes at[0] … n - 1 (``how``: an ablation's mask, whether it masks, whether it skips the SSE; version 27's
    mask where the image model is on, and whether it is version 27; ``state``: the work arrays, the output, the
    histories, ``at``); returns the payload's length, and stops early, at a byte's start, where the encoder's output has
    no room for another byte."""
    mask, masked, no_sse, on_images, settled = how
    work, out, (hist, last, lastd, gate), at = state
    apm1, apm2, apm3 = tables[5], tables[6], tables[7]
    nb_mask = (tables[0].shape[1] >> 4) - 1
    x, aj = work[0], work[3]
    n_mix = work[2].shape[0]
    six = n_mix > 5  # version 6: the sixth mixer, its rates, the APMs' pairs
    slow = slower(tables[0])
    lr2 = final_rate(six)
    tail = has_tail(apm3)  # version 22: three more APM stages and the calibration (lmzip.cm.sse)
    h = hist[0]
    k_mark, next_mark, first = at[1], at[2], at[3]
    ht, base = tables[0], work[5]
    expect = (np.int64(0), np.int64(0), np.int64(0), np.int64(0))
    if at[0] < n:  # the first byte's contexts (each byte's next: at its last bit, while the mixers learn)
        expect = byte_ask(tables, work, h, hist, buf, n + 1, nb_mask, ways)
    for i in range(at[0], n):
        if encode and st[3] + 64 > out.shape[0]:
            at[0], at[1], at[2] = i, k_mark, next_mark
            return st[3]
        c4 = h[C4]
        c1 = c4 & 0xFF
        lr1 = first_rate(i - first if i >= first else i, six, slow)  # a primer: the input starts the schedule again
        byte_sets(span_of(work), work[2], c4)
        c0 = 1
        for j in range(8):
            if j == 0 or j == 4:  # the nibble's blocks were asked for at the bit before (`bucket_ask`)
                bucket_find(ht, base, nb_mask, ways)
                state_ask(ht, tables[2], base, j, c0)
                if j == 0:
                    run_start(ht, base, work[7], work[8])
            bit_sets(tables[3], work, h, c0, c4, n_mix)
            refine_ask(apm1, apm2, c4, c0)
            if tail:
                tail_ask(apm3, c4, c0, h[W0])
            nib, known, mi, ei, li, iset, ik = bit_inputs(tables, work, h, buf, 0, (c0, c1, j), expect, gate)
            if masked:
                x *= mask
            if settled and work[6][0] >= 0 and gate[FLAT] >= 128:  # a bilevel image, mostly blank: text models silent
                x *= on_images
            df = bit_mix(tables, work, h, (c0, c4, j), (known, mi, expect[3], iset), gate, n_mix, settled)
            pm = sq(df)
            p = refine((apm1, apm2, apm3), aj, pm, c4, c0, mi, six, ik, work[12], h[TYPES] & 7)
            if tail:
                p = tail_p(apm3, aj, pm, p, c4, c0, j, h[W0] if ik < 0 else -1)
            if no_sse:
                p = clamp_p(16 * pm)
            y = _code_bit(encode, st, out, src, buf, i, j, p, first)
            bit_learn(tables, work, (nib, c0, c1, j), (mi, ei, li), y)
            if j == 3:  # the second nibble's blocks, asked for while the mixers learn
                bucket_ask(ht, base, work[4], (c0 << 1) | y, nb_mask, ways)
            elif j == 7:  # the byte's histories, then the next byte's contexts and blocks, likewise
                byte_end(tables, work, h, ((c0 << 1) | y) & 0xFF, buf, 0, n + 1, last, lastd, expect, gate)
                if i + 1 < n:
                    expect = byte_ask(tables, work, h, hist, buf, n + 1, nb_mask, ways)
            mixed_learn(tables, work, y, (lr1, lr2), six)
            if tail:
                tail_learn(apm3, aj, y)
            c0 = (c0 << 1) | y
        if i >= first:
            k_mark, next_mark = _mark(marks, k_mark, next_mark, i - first, n - first, st[3])
    at[0] = n
    if encode:
        flush(st, out)
        return st[3]
    return n
