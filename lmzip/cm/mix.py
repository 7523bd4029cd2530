"""Counting mixed with a language model: the tokens of segments coded side by side, bit by bit.

The language model predicts the next *token* of every segment (exact integer counts, out of 2^24);
the counting models of `model` predict *bits of bytes*. To mix them, a token is coded as its bytes:
the vocabulary is sorted by the tokens' bytes, so the tokens that start with any prefix of bits form
one contiguous range, and the model's probability that the next bit is 1 is the count of the range
where it is 1 over the count of the whole range (two sums of the cumulative row). That probability is
one more input of the mixers (and picks a mixer's weight set and an APM's context), so where this
file repeats itself, or the model knows nothing (binaries, tables), the counting models take over.
Where a byte string is itself a token and also the start of longer ones, an end flag, coded with the
model's own probability (the token's count over the range's), says whether the token ends there;
a bit for which no token of the range has the other value is not coded at all. With the model alone
these steps multiply back to the token's probability (the chain rule, up to 16-bit rounding), so
mixing starts from what the model pays and learns where to pay less (where it cannot, on a kind the
model does not know, lmzip.coding.stream keeps the block counted alone).

Segments run side by side (the model steps them as one batch), so the counting models share their
tables across the segments of a group, while each segment keeps its own history (last bytes, words,
lines, record length, match): the bytes of segment r live at r * cap ... in one buffer, a match may
point into any segment, and a position counts as known only once its segment has coded it, on both
sides alike (the encoder fills the buffer in the decoder's order). Every value is an integer.

Format 12 runs counting's models of cm version `CM_VERSION` (26; its frames of versions 9 and 11 still decode) through
the very machinery counting's own loop runs (lmzip.cm.loop), the language model's input and mixer added, and refines
as that loop does (from version 16 the misses stage, from 22 three more stages and the calibration); format 11's
frames, cm version 1, decode through lmzip.cm.mix1.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numba import njit

from lmzip.cm import jitcache  # noqa: F401 - first: clears a stale compiled loop before numba loads it

# isort: split
from lmzip.cm import mix1, warm
from lmzip.cm.body import bucket_ask, bucket_find, state_ask
from lmzip.cm.coder import new_state, start_decoder
from lmzip.cm.history import C4, FILL, N_STATE, TYPES, W0
from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.loop import (
    bit_inputs,
    bit_learn,
    bit_mix,
    bit_sets,
    byte_contexts,
    byte_end,
    byte_sets,
    byte_start,
    group_bounds,
    mixed_learn,
    scratch,
    span_of,
)
from lmzip.cm.mixers import APM_RATE, APM_RATE_PAIR, final_rate, first_rate, refine, refine_ask, slower
from lmzip.cm.model import Tables, n_final, n_mix, n_sets
from lmzip.cm.model import _code as model_code
from lmzip.cm.model import allocate as allocate_tables
from lmzip.cm.model import table_bytes as counting_bytes
from lmzip.cm.parts import apm_init, apm_p, apm_p_pair, apm_update, apm_update_pair, clamp_p, sq
from lmzip.cm.run import run_start
from lmzip.cm.sizes import n_inputs
from lmzip.cm.sse import has_tail, tail_ask, tail_learn, tail_p
from lmzip.cm.tables import stretch
from lmzip.cm.walk import Vocab, code_bit, cumulate, ends, first_at_least, grow

CM_VERSION = 26  # the counting models' version format 12's mixed loop writes (versions 9 and 11 before; format 11's: 1)
VERSIONS = (1, 9, 11, 26)  # the versions a mixed frame can hold
W_LM = 1 << 15  # the model's start weight in every first-layer mixer (1/2)
W_CM = 1 << 11  # each counting input's (1/32; counting alone starts at 1/16: with version 9's 82 inputs, 1/16 left
# enwik4 1,930 bytes mixed where 1/32 writes 1,895, paper5 3,447 against 3,434, alice29 27,501 against 27,471)
W_CM_11 = 1 << 10  # version 11's 161 inputs each start at 1/64 (1/32 wrote 0.24% more over the levels' sample at -4);
# version 26's 203 too (1/128 and 1/256 wrote about the same on the first 64 KB of bible.txt, paper1 and enwik4)

__all__ = ["CM_VERSION", "VERSIONS", "State", "Vocab", "allocate", "compile_beside", "start", "step", "table_bytes",
           "warm_up"]


@dataclass
class State:
    """Everything one group's loop owns: the counting tables (shared by its segments: counting's own
    record, its mixers sized for the model's input and mixer too), two more APM stages, each segment's history,
    the byte buffer, the loop's work arrays and the coder."""

    cm: Tables
    version: int
    apm4: np.ndarray   # the model's p x the partial byte
    apm5: np.ndarray   # the end flag's: the last byte x the model's p
    seg: np.ndarray    # [B, N_STATE]: each segment's history (lmzip.cm.body)
    last: np.ndarray   # [B, 256] where each byte value was last seen (+1), per segment
    lastd: np.ndarray  # [B, 256] the distance between its last two sightings
    gate: np.ndarray   # [B, 4] each segment's image gate (lmzip.cm.image)
    buf: np.ndarray    # [B * cap] the segments' bytes
    cap: int
    work: tuple        # lmzip.cm.loop.scratch (version 1: none)
    coder: np.ndarray  # the arithmetic coder's state
    shared: np.ndarray  # [bytes coded in the group, 1 once the data proved corrupt]
    cum: np.ndarray    # [V + 1] scratch: one row's cumulative counts in sorted order


def table_bytes(level: int, segments: int, cap: int, version: int = CM_VERSION) -> int:
    """The memory a group's loop takes at counting level ``level`` in cm ``version``: the tables, the model's
    weights and APM stages, the histories and the byte buffer."""
    if version == 1:
        return mix1.table_bytes(level, segments, cap)
    # the model's input column in every weight set, its 256 sets, its column of the final mixer, apm4 and apm5
    extra = 4 * n_sets(version) + 4 * 256 * (n_inputs(version) + 1) + 4 * n_final(version) + 4 * 33 * (2 * 32 * 256)
    return counting_bytes(level, version) + extra + segments * (8 * N_STATE + 16 * 256 + 32 + cap)


def allocate(level: int, segments: int, cap: int, vocab_size: int, version: int = CM_VERSION) -> State:
    """Fresh state for a group of ``segments`` segments of at most ``cap - 1`` bytes each."""
    if version == 1:
        cm, work = mix1.allocate_tables(level), ()
    else:
        t = allocate_tables(level, version)
        start = W_CM_11 if version >= 11 else W_CM
        lazy = t.start > 0  # as counting's own tables (version 5 on): rows set as a bit first chooses them (fresh_rows)
        shape = (n_sets(version) + 32 * 8, n_inputs(version) + 1)
        w1 = np.zeros(shape, dtype=np.int32) if lazy else np.full(shape, start, dtype=np.int32)
        if not lazy:
            w1[:, n_inputs(version)] = W_LM  # the model's input follows counting's (its bias last)
        k = n_mix(version) + 1
        cm = replace(t, w1=w1, wf=np.full((t.wf.shape[0], k + 1), 65536 // k, dtype=np.int32), start=0)
        starts = np.array([start, W_LM] if lazy else [0], dtype=np.int64)  # counting's rows', the model's column's
        work = scratch(cm.w1, cm.wf, cm.ht, cm.it, cm.rsm, cm.ltab, group_bounds(n_mix(version), cm.ht.shape[0] + 2),
                       starts, cm.span)
    return State(
        cm=cm, version=version, apm4=apm_init(32 * 256), apm5=apm_init(256 * 32),
        seg=np.zeros((segments, N_STATE), dtype=np.int64),
        last=np.zeros((segments, 256), dtype=np.int64), lastd=np.zeros((segments, 256), dtype=np.int64),
        gate=np.zeros((segments, 4), dtype=np.int64),
        buf=np.zeros(segments * cap, dtype=np.uint8), cap=cap, work=work,
        coder=new_state(), shared=np.zeros(2, dtype=np.int64), cum=np.zeros(vocab_size + 1, dtype=np.int64),
    )


def step(encode: bool, s: State, v: Vocab, rows: np.ndarray, counts: np.ndarray, toks: np.ndarray,
         out: np.ndarray, src: np.ndarray) -> np.ndarray:
    """Code one token in each of ``rows`` (segment indices, in order) under the model's ``counts``
    [len(rows), V] (integers in float32, as lmzip.coding.coder takes them): encoding ``toks``, or
    decoding into ``toks``. Returns the output buffer (grown when needed)."""
    warm.join()  # a first run: the child compiling this loop beside counting's (lmzip.cm.warm)
    t = s.cm
    counts = np.ascontiguousarray(counts, dtype=np.float32)
    voc = (v.sbytes, v.slen, v.sperm, v.rank, v.root)
    if s.version == 1:
        tables = (t.ht, t.t01, t.sm, t.w1, t.wf, t.apm1, t.apm2, t.apm3, s.apm4, s.apm5, t.mtab, t.msm)
        return mix1.step1(encode, rows, counts, toks, (out, src), voc, tables, (s.seg, s.last, s.lastd, s.buf, s.cap),
                          (s.coder, s.shared, s.cum))
    return _step(encode, rows, counts, toks, (out, src), voc, (t.arrays, s.apm4, s.apm5, t.ways),
                 (s.seg, s.last, s.lastd, s.gate, s.buf, s.cap), (s.coder, s.shared, s.cum), s.work)


def compile_beside(room: int | None, cores: int) -> bool:
    """A first run, where neither this loop nor counting's has code for this CPU: this one compiles in a child
    (`warm_up`) while counting's compiles here, where there is ``room`` for it and a second of ``cores``
    (lmzip.cm.warm); returns whether a child runs."""
    return warm.beside((_step, model_code), "from lmzip.cm import mix; mix.warm_up()", room, cores)


def warm_up() -> None:
    """Run this loop once over one token, with the argument types the mixed coder gives it (the same compiled code),
    so numba compiles it and writes it to its cache."""
    vocab = Vocab.of([bytes([b]) for b in range(256)])
    state = allocate(1, 1, 64, 256, CM_VERSION)
    counts = np.full((1, 256), 1 << 16, dtype=np.float32)  # out of 2^24
    out, src = np.empty(4096, dtype=np.uint8), np.zeros(1, dtype=np.uint8)
    step(True, state, vocab, np.zeros(1, dtype=np.int64), counts, np.array([65], dtype=np.int64), out, src)


def start(s: State, payload: bytes) -> np.ndarray:
    """Prime the decoder with the stream's first bytes; returns the payload as `step` takes it (a writable
    copy: the encoder's buffer is writable too, so both sides run one compiled loop, not two)."""
    src = np.array(np.frombuffer(payload, dtype=np.uint8))
    start_decoder(s.coder, src)
    return src


@njit(cache=True, nogil=True)
def _step(encode, rows, counts, toks, io, voc, model, segs, coding, work):
    out, src = io
    sbytes, slen, sperm, rank, root = voc
    seg, cap = segs[0], segs[5]
    st, shared, cum = coding
    V = sbytes.shape[0]
    for q in range(rows.shape[0]):
        r = rows[q]
        cumulate(cum, counts, q, sperm)
        target = rank[toks[q]] if encode else 0
        lo, hi, d = root, V, np.int64(0)  # not a literal 0: _byte compiles once, not twice
        ready = (np.int64(0), (np.int64(0), np.int64(0), np.int64(0), np.int64(0)))  # `_byte`'s: nothing asked yet
        while True:
            if d > 0 and slen[lo] == d:  # the bytes so far are a token; longer ones may follow
                if hi - lo == 1:
                    break
                y = 1 if encode and slen[target] == d else 0
                if ends(encode, (st, out, src), model[2], cum, lo, hi, seg[r, C4], y):
                    break
                lo += 1
            if encode and st[3] + 64 > out.shape[0]:
                out = grow(out)
            if seg[r, FILL] + 2 > cap:  # corrupt data: more bytes than a segment can hold
                shared[1] = 1
                return out
            tbyte = np.int64(sbytes[target, d]) if encode else 0
            lo, hi, ready = _byte(encode, (st, out, src), model, segs, shared, (sbytes, slen, cum, lo, hi, d), r, tbyte,
                                  work, ready)
            d += 1
        toks[q] = sperm[lo]
    return out


@njit(**UNCOUNTED)
def _byte(encode, coder, model, segs, shared, walk, r, tbyte, work, ready):
    """One byte of segment r's token through counting's models (lmzip.cm.loop) and the language model: each bit
    splits the token range [lo, hi) (byte d of the sorted tokens); a bit only one side of the range has is not
    coded, every model learns it all the same; the others are coded mixed. ``ready``: (1, what the matches expect)
    where the byte before, of this segment, found this byte's contexts and asked for its first nibble's blocks.
    Returns the range left and, where the token surely goes on, the next byte's ``ready`` (else (0, ...)): its
    contexts found and blocks asked for at bit 7, while the mixers learn, as counting's loop does (the same bytes)."""
    st, out, src = coder
    tables, apm4, ways = model[0], model[1], model[3]
    apms = (tables[5], tables[6], tables[7])
    seg, last, lastd, gates, buf, cap = segs
    sbytes, slen, cum, lo, hi, d = walk
    x, sel, aj = work[0], work[2], work[3]
    tail = has_tail(tables[7])  # version 22's three more stages and the calibration (lmzip.cm.sse)
    h, g0, gate, i = seg[r], r * cap, gates[r], shared[0]
    n_mix = sel.shape[0] - 1  # counting's first-layer mixers; the model's is the last
    six = n_mix > 5
    rates = (first_rate(i, six, slower(tables[0])), final_rate(six))
    x_lm, set_lm = x.shape[0] - 1, tables[3].shape[0] - 256
    nb_mask = (tables[0].shape[1] >> 4) - 1
    c4 = h[C4]
    c1 = c4 & 0xFF
    asked, expect = ready
    if asked:
        byte_sets(span_of(work), sel, c4)
    else:
        expect = byte_start(tables, work, h, seg, buf, g0, cap)
    after = (np.int64(0), expect)
    c0 = 1
    for j in range(8):
        # the model's view: how the range splits on this bit
        mid = first_at_least(sbytes, lo, hi, d, ((((c0 - (1 << j)) << 1) | 1) << (7 - j)))
        n0, n1 = cum[mid] - cum[lo], cum[hi] - cum[mid]
        if j == 0 and not asked:  # else asked for at the bit before (`bucket_ask`), as the second nibble's
            bucket_ask(tables[0], work[5], work[4], c0, nb_mask, ways)
        if j == 0 or j == 4:
            bucket_find(tables[0], work[5], nb_mask, ways)
            if j == 0:
                run_start(tables[0], work[5], work[7], work[8])
            state_ask(tables[0], tables[2], work[5], j, c0)
        bit_sets(tables[3], work, h, c0, c4, n_mix)
        refine_ask(apms[0], apms[1], c4, c0)
        if tail:
            tail_ask(apms[2], c4, c0, h[W0])
        nib, known, mi, ei, li, iset, ik = bit_inputs(tables, work, h, buf, g0, (c0, c1, j), expect, gate)
        mixed = n0 != 0 and n1 != 0
        if not mixed:
            y = 1 if n0 == 0 else 0
        else:
            plm = (n1 << 12) // (n0 + n1)
            slm = stretch(1 if plm < 1 else (4095 if plm > 4095 else plm))
            lmq = (slm + 2048) >> 7
            x[x_lm], sel[n_mix] = slm, set_lm + lmq * 8 + j
            df = bit_mix(tables, work, h, (c0, c4, j), (known, mi, expect[3], iset), gate, n_mix, False)
            pm = sq(df)
            p = refine(apms, aj, pm, c4, c0, mi, six, ik, work[12], h[TYPES] & 7)  # version 16's misses stage, if any
            if tail:
                p = tail_p(apms[2], aj, pm, p, c4, c0, j, h[W0] if ik < 0 else -1)
            a4, j4 = apm_p_pair(apm4, lmq * 256 + c0, pm) if six else apm_p(apm4, lmq * 256 + c0, pm)
            y = code_bit(encode, st, out, src, (tbyte >> (7 - j)) & 1, clamp_p((5 * p + 3 * a4 + 4) >> 3))
        bit_learn(tables, work, (nib, c0, c1, j), (mi, ei, li), y)
        if y:
            lo = mid
        else:
            hi = mid
        c0 = (c0 << 1) | y
        if j == 3:  # the second nibble's blocks, asked for while the mixers learn
            bucket_ask(tables[0], work[5], work[4], c0, nb_mask, ways)
        elif j == 7:  # the byte's histories; where the token goes on, the next byte's contexts and blocks likewise
            byte_end(tables, work, h, c0 & 0xFF, buf, g0, cap, last[r], lastd[r], expect, gate)
            if slen[lo] != d + 1:
                after = (np.int64(1), byte_contexts(tables, work, h, seg, buf, g0, cap))
                bucket_ask(tables[0], work[5], work[4], 1, nb_mask, ways)
        if mixed:
            mixed_learn(tables, work, y, rates, six)
            if tail:
                tail_learn(apms[2], aj, y)
            if six:
                apm_update_pair(apm4, j4, y, APM_RATE_PAIR)
            else:
                apm_update(apm4, j4, y, APM_RATE)
    shared[0] = i + 1
    return lo, hi, after
