"""The context-mixing model and its coding loop: one compiled function codes a whole stream.

Per bit, every model offers two stretched probabilities; four mixers (weight sets chosen by the
partial byte, by match state x how many high orders know this context x bit position, by the
previous byte, by the byte before it) combine them, a final mixer (sets by match/orders state)
combines those, three APM stages (order 1, order 2, match state) refine the result, and the
arithmetic coder spends -log2(p) bits on the bit actually seen.
Encoding and decoding run this very loop (`encode` picks which coder step is called), so the two
sides cannot drift apart: the decoder rebuilds every table from the bytes it has already emitted.

Models (row in `sm`, the per-model state maps; hashed ones also have a row in `ht`):
  0 order-0 (direct)          1 order-1 (direct)        2..6 orders 2, 3, 4, 5, 6 (hashed)
  7 word (current word)       8 word + previous word    9 sparse: bytes 2-3 back
 10 sparse: bytes 4 and 8 back
 11 record: the byte one row up + the previous byte    12 record: the three bytes above + two rows up
 13 text column: column in the line + the byte above it in the previous line + the previous byte
 + the match model (two inputs) + a bias
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from lmzip.cm import jitcache  # noqa: F401 - first: clears a stale compiled loop before numba loads it
from lmzip.cm.coder import decode_bit, encode_bit, flush, new_state, start_decoder
from lmzip.cm.parts import (
    SLOT_INIT,
    adapt,
    apm_init,
    apm_p,
    apm_update,
    clamp_p,
    find_bucket,
    hash2,
    mix_dot,
    mix_train,
    row_length,
    slide,
    slot_inputs,
    slot_update,
    sq,
)
from lmzip.cm.tables import stretch

N_MODELS = 14          # rows of sm
N_HASHED = 12          # rows of ht (models 2..13)
N_IN = 2 * N_MODELS + 3  # two inputs per model, two from the match model, one bias
MIX2_SETS = 4 * 6 * 8  # match-length bucket x known high orders (0..5) x bit position
# the first-layer weight sets, one array: by partial byte c0, by match/orders state, by the previous
# byte, by the byte before it
SET_C0, SET_ST, SET_C1 = 0, 256, 256 + MIX2_SETS
SET_C2 = SET_C1 + 256
N_SETS = SET_C2 + 256
N_MIX = 4              # first-layer mixers; the final mixer weighs their outputs (sets by SET_ST's state)
APM2_BITS = 14
MINLEN = 6             # the match model looks up the last MINLEN bytes
SLOT_LIMIT = 63        # a slot's rate stops falling at 1/64.5: adapts to drift, still averages
SM_LIMIT = 255
MIX_LR1, MIX_LR2 = 24, 16
APM_RATE = 6


@dataclass(frozen=True)
class Tables:
    """Every array the model owns; its size is fixed by the level alone (see `allocate`)."""

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

    @property
    def nbytes(self) -> int:
        """Bytes allocated by all the tables together."""
        return sum(a.nbytes for a in (self.ht, self.t01, self.sm, self.w1, self.wf, self.apm1, self.apm2, self.apm3,
                                      self.mtab, self.msm))


def table_bits(level: int) -> tuple[int, int]:
    """(log2 slots per hashed table, log2 match-table entries) for a level 1..9."""
    return 15 + level, 13 + level


def table_bytes(level: int) -> int:
    """The memory the tables of a level take, computed from the sizes alone (no allocation)."""
    tb, mb = table_bits(level)
    return (4 * (N_HASHED << tb) + 4 * 2 * 65536 + 4 * N_MODELS * 8192 + 4 * N_IN * N_SETS + 4 * 256 * (N_MIX + 1)
            + 4 * 33 * (65536 + (1 << APM2_BITS) + 65 * 256) + 4 * (1 << mb) + 4 * 64)


def allocate(level: int) -> Tables:
    """Fresh tables for a level: every probability 1/2, weights 0.25, APMs the identity."""
    tb, mb = table_bits(level)
    half = np.uint32((1 << 21) << 10)  # p = 1/2 with count 0 for the state maps
    return Tables(
        ht=np.full((N_HASHED, 1 << tb), SLOT_INIT, dtype=np.uint32),
        t01=np.full((2, 65536), SLOT_INIT, dtype=np.uint32),
        sm=np.full((N_MODELS, 8192), half, dtype=np.uint32),
        w1=np.full((N_SETS, N_IN), 1 << 12, dtype=np.int32),
        wf=np.full((256, N_MIX + 1), 65536 // N_MIX, dtype=np.int32),
        apm1=apm_init(65536),
        apm2=apm_init(1 << APM2_BITS),
        apm3=apm_init(65 * 256),
        mtab=np.zeros(1 << mb, dtype=np.int32),
        msm=np.full(64, half, dtype=np.uint32),
    )


# Inputs an ablation can switch off (benchmarks/ablation.py; files never do): bits of `off`
OFF_ORDERS, OFF_WORDS, OFF_SPARSE, OFF_RECORDS, OFF_MATCH, OFF_SSE = 1, 2, 4, 8, 16, 32
_OFF_SPANS = ((OFF_ORDERS, 0, 14), (OFF_WORDS, 14, 18), (OFF_SPARSE, 18, 22), (OFF_RECORDS, 22, 28),
              (OFF_MATCH, N_IN - 3, N_IN - 1))


def run(encode: bool, src: np.ndarray, n: int, t: Tables, off: int = 0, marks: np.ndarray | None = None) -> np.ndarray:
    """Encode src (n bytes) to a payload, or decode n bytes from the payload src (``off``: inputs
    silenced for an ablation, OFF_* bits; 0 in every file; ``marks``, K int64s: the encoder records
    there the payload's length after every K-th part of the input, its cost profile)."""
    marks = np.zeros(0, dtype=np.int64) if marks is None else marks
    st = new_state()
    if encode:  # the loop reads the input as its history; the decoder fills its history as it goes
        buf, src = np.array(src[:n], dtype=np.uint8), np.zeros(1, dtype=np.uint8)
    else:
        buf, src = np.empty(n, dtype=np.uint8), np.ascontiguousarray(src, dtype=np.uint8)
    mask = np.ones(N_IN, dtype=np.int64)  # an input's factor: 0 silences it (the mixers then ignore it)
    for bit, a, b in _OFF_SPANS:
        if off & bit:
            mask[a:b] = 0
    out, used = _code(encode, src, buf, n, st, t.ht, t.t01, t.sm, t.w1, t.wf, t.apm1, t.apm2, t.apm3, t.mtab, t.msm,
                      mask, bool(off & ~OFF_SSE), bool(off & OFF_SSE), marks)
    return out[:used]


@njit(cache=True)
def _grow(out: np.ndarray) -> np.ndarray:
    bigger = np.empty(out.shape[0] * 2 + 1024, dtype=np.uint8)
    bigger[: out.shape[0]] = out
    return bigger


@njit(cache=True)
def _code(encode, src, buf, n, st, ht, t01, sm, w1, wf, apm1, apm2, apm3, mtab, msm, mask,  # noqa: C901 - one loop
          masked, no_sse, marks):
    nb_mask = (ht.shape[1] >> 4) - 1
    m_mask = mtab.shape[0] - 1
    if encode:
        out = np.empty(n // 2 + 1024, dtype=np.uint8)
    else:
        out = buf
        start_decoder(st, src)
    x = np.zeros(N_IN, dtype=np.int64)
    xf = np.zeros(N_MIX + 1, dtype=np.int64)
    ctx = np.zeros(N_HASHED, dtype=np.int64)   # per hashed model: its context hash for this byte
    base = np.zeros(N_HASHED, dtype=np.int64)  # per hashed model: the current nibble's bucket
    c4 = 0       # the last four bytes, most recent lowest
    c8 = 0       # the four before them
    w0 = 0       # hash of the word being read (case-folded), 0 between words
    wp = 0       # hash of the previous word
    mlen = 0     # length of the current match (0: none)
    mptr = 0     # where the byte the match predicts is
    # record model: a byte value seen three times at one fixed distance proposes that distance as
    # the record (row) length; it is adopted once proposed three times running
    last = np.zeros(256, dtype=np.int64)   # where each byte value was last seen (+1)
    lastd = np.zeros(256, dtype=np.int64)  # the distance between its last two sightings
    # NB: `cand` is both the record model's candidate row length and, below, the match table's lookup,
    # which overwrites it whenever no match is held. The files this format writes depend on that
    # sharing (it helps tables: kennedy.xls, ptt5), so it stays; a change would be a new cm version.
    rlen, cand, cand_n = 0, 0, 0
    line, pline = 0, 0  # where the current and the previous text line start
    k_mark, next_mark = 0, (n + marks.shape[0] - 1) // max(1, marks.shape[0])  # the next mark's byte count
    for i in range(n):
        if encode and st[3] + 64 > out.shape[0]:
            out = _grow(out)
        c1 = c4 & 0xFF
        c2 = (c4 >> 8) & 0xFF
        # the mixers learn fast at first, then settle: x24 at the start, x18 at 256 KiB, x14 at 1 MiB
        lr1 = MIX_LR1 // 2 + ((MIX_LR1 // 2) << 18) // ((1 << 18) + i)
        # --- contexts of this byte ---
        ctx[0] = hash2(c4 & 0xFFFF, 2)
        ctx[1] = hash2(c4 & 0xFFFFFF, 3)
        ctx[2] = hash2(c4, 4)
        ctx[3] = hash2(c4, (c8 & 0xFF) | 0x500)
        ctx[4] = hash2(hash2(c4, c8), 8)
        ctx[5] = hash2(w0, 7 + (c1 << 8) * (w0 == 0))
        ctx[6] = hash2(w0, wp + 8)
        ctx[7] = hash2(c4 & 0xFFFF00, 9)
        ctx[8] = hash2((c4 >> 24) | ((c8 >> 16) & 0xFF00), 10)
        if rlen > 0 and i >= 2 * rlen:
            up, up2 = np.int64(buf[i - rlen]), np.int64(buf[i - 2 * rlen])
            ctx[9] = hash2(up | (c1 << 8) | (rlen << 16), 11)
            ctx[10] = hash2(up | (np.int64(buf[i - rlen + 1]) << 8) | (np.int64(buf[i - rlen - 1]) << 16)
                            | (up2 << 24), 12)
        else:
            ctx[9] = hash2(c1, 11)
            ctx[10] = 12
        col = i - line
        above = np.int64(buf[pline + col]) if pline + col < line else 0
        ctx[11] = hash2(min(col, 255) | (above << 8) | (c1 << 16), 13)
        # --- the match model's guess for this byte ---
        ebyte = buf[mptr] if mlen > 0 else 0
        mq = mlen if mlen < 16 else 16 + min((mlen - 16) >> 2, 15)
        mlb = 0 if mlen == 0 else (1 if mlen < 16 else (2 if mlen < 32 else 3))
        c0 = 1
        c = 0
        for j in range(8):
            if j == 0 or j == 4:
                for k in range(N_HASHED):
                    base[k] = find_bucket(ht, k, hash2(ctx[k], c0), nb_mask)
            jj = j << 10  # state maps are kept per bit position
            nib = c0 if j < 4 else ((1 << (j - 4)) | (c0 & ((1 << (j - 4)) - 1)))
            # --- predict: gather the inputs ---
            v = np.int64(t01[0, c0])
            x[0], x[1] = slot_inputs(v, sm, 0, jj)
            v = np.int64(t01[1, (c1 << 8) | c0])
            x[2], x[3] = slot_inputs(v, sm, 1, jj)
            known = 0
            for k in range(N_HASHED):
                v = np.int64(ht[k, base[k] + nib])
                x[4 + 2 * k], x[5 + 2 * k] = slot_inputs(v, sm, 2 + k, jj)
                if k < 5 and (v & 1008) != 0:
                    known += 1
            ebit = 0
            if mlen > 0 and ((ebyte | 256) >> (8 - j)) == c0:
                ebit = (ebyte >> (7 - j)) & 1
                mi = mq * 2 + ebit
                x[N_IN - 3] = stretch(np.int64(msm[mi]) >> 20)
                x[N_IN - 2] = (min(mlen, 32) << 5) * (2 * ebit - 1)
            else:
                mi = -1
                x[N_IN - 3] = 0
                x[N_IN - 2] = 0
            x[N_IN - 1] = 256
            if masked:
                for q in range(N_IN):
                    x[q] *= mask[q]
            s2 = ((mlb if mi >= 0 else 0) * 6 + known) * 8 + j
            xf[0] = mix_dot(w1, SET_C0 + c0, x, N_IN)
            xf[1] = mix_dot(w1, SET_ST + s2, x, N_IN)
            xf[2] = mix_dot(w1, SET_C1 + c1, x, N_IN)
            xf[3] = mix_dot(w1, SET_C2 + c2, x, N_IN)
            xf[4] = 256
            df = mix_dot(wf, s2, xf, N_MIX + 1)
            p = sq(df)
            a1, j1 = apm_p(apm1, (c1 << 8) | c0, p)
            actx = hash2(c4 & 0xFFFF, c0) & ((1 << APM2_BITS) - 1)
            a2, j2 = apm_p(apm2, actx, p)
            a3, j3 = apm_p(apm3, (mi + 1) * 256 + c0, p)
            p = clamp_p((16 * p + a1 + a2 + a3 + 2) >> 2)  # 16 bits: near-certain bits cost ~0
            if no_sse:
                p = clamp_p(16 * sq(df))
            # --- code the bit ---
            if encode:
                y = (np.int64(buf[i]) >> (7 - j)) & 1
                encode_bit(st, out, y, p)
            else:
                y = decode_bit(st, src, p)
            # --- update every model with it ---
            mix_train(w1, SET_C0 + c0, x, N_IN, ((y << 12) - sq(xf[0])) * lr1)
            mix_train(w1, SET_ST + s2, x, N_IN, ((y << 12) - sq(xf[1])) * lr1)
            mix_train(w1, SET_C1 + c1, x, N_IN, ((y << 12) - sq(xf[2])) * lr1)
            mix_train(w1, SET_C2 + c2, x, N_IN, ((y << 12) - sq(xf[3])) * lr1)
            mix_train(wf, s2, xf, N_MIX + 1, ((y << 12) - sq(df)) * MIX_LR2)
            apm_update(apm1, j1, y, APM_RATE)
            apm_update(apm2, j2, y, APM_RATE)
            apm_update(apm3, j3, y, APM_RATE)
            v = np.int64(t01[0, c0])
            sm[0, (v & 1023) | jj] = adapt(np.int64(sm[0, (v & 1023) | jj]), y, SM_LIMIT)
            t01[0, c0] = slot_update(v, y, SLOT_LIMIT)
            o1 = (c1 << 8) | c0
            v = np.int64(t01[1, o1])
            sm[1, (v & 1023) | jj] = adapt(np.int64(sm[1, (v & 1023) | jj]), y, SM_LIMIT)
            t01[1, o1] = slot_update(v, y, SLOT_LIMIT)
            for k in range(N_HASHED):
                s = base[k] + nib
                v = np.int64(ht[k, s])
                sm[2 + k, (v & 1023) | jj] = adapt(np.int64(sm[2 + k, (v & 1023) | jj]), y, SM_LIMIT)
                ht[k, s] = slot_update(v, y, SLOT_LIMIT)
            if mi >= 0:
                msm[mi] = adapt(np.int64(msm[mi]), y, SM_LIMIT)
            c0 = (c0 << 1) | y
        c = c0 & 0xFF
        if not encode:
            buf[i] = c
        while k_mark < marks.shape[0] and i + 1 >= next_mark:  # the cost profile (encoding)
            marks[k_mark] = st[3]
            k_mark += 1
            next_mark = ((k_mark + 1) * n + marks.shape[0] - 1) // marks.shape[0]
        # --- byte done: slide the contexts ---
        c4, c8, w0, wp = slide(c4, c8, w0, wp, c)
        if c == 10:
            pline, line = line, i + 1
        # --- record model: propose and adopt a row length ---
        d = i + 1 - last[c]
        cand, cand_n, rlen = row_length(d, last[c], lastd[c], cand, cand_n, rlen)
        lastd[c] = d
        last[c] = i + 1
        # --- match model: extend the match or look a new one up ---
        if mlen > 0 and ebyte == c:
            mlen = min(mlen + 1, 65535)
            mptr += 1
        else:
            mlen = 0
        # two hashes share the table: the last 8 bytes (tried first: a longer, likelier match) and
        # the last MINLEN; a candidate counts only if the bytes before it really agree
        if i + 1 >= MINLEN:
            hs = hash2(c4, c8 & 0xFFFF) & (m_mask >> 1)
            hl = (hash2(c4, c8) & (m_mask >> 1)) | ((m_mask >> 1) + 1)
            if mlen == 0:
                for h in (hl, hs):
                    cand = mtab[h]
                    if cand > 0 and mlen == 0:
                        ln = 0
                        while ln < 32 and ln < cand and buf[cand - 1 - ln] == buf[i - ln]:
                            ln += 1
                        if ln >= MINLEN:
                            mlen, mptr = ln, cand
            mtab[hs] = i + 1
            if i + 1 >= 8:
                mtab[hl] = i + 1
    if encode:
        flush(st, out)
        return out, st[3]
    return out, n
