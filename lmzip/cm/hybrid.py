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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from lmzip.cm import jitcache  # noqa: F401 - first: clears a stale compiled loop before numba loads it
from lmzip.cm.coder import decode_bit, encode_bit, new_state, start_decoder
from lmzip.cm.model import (
    APM2_BITS,
    APM_RATE,
    MINLEN,
    MIX_LR1,
    MIX_LR2,
    N_HASHED,
    N_MODELS,
    SET_C0,
    SET_C1,
    SET_C2,
    SET_ST,
    SLOT_LIMIT,
    SM_LIMIT,
    table_bits,
)
from lmzip.cm.model import N_IN as CM_IN
from lmzip.cm.model import N_SETS as CM_SETS
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

N_IN = CM_IN + 1        # the counting inputs, then the language model's stretched p
X_LM = CM_IN            # its index
SET_LM = CM_SETS        # the fifth mixer's weight sets: the model's p (32 buckets) x bit position
N_SETS = SET_LM + 32 * 8
N_MIX = 5
W_LM = 1 << 15          # the model's start weight in every first-layer mixer (the others start at 1/16)
# the per-segment state, one int64 row per segment
C4, C8, W0, WP, MLEN, MPTR, LINE, PLINE, RLEN, CAND, CANDN, FILL = range(12)
N_STATE = 12


@dataclass(frozen=True)
class Vocab:
    """The vocabulary sorted by the tokens' bytes: what the loop needs to find a prefix's range."""

    sbytes: np.ndarray  # [V, maxlen] uint8: the sorted tokens' bytes (0 past their end)
    slen: np.ndarray    # [V] int64: their lengths
    sperm: np.ndarray   # [V] int64: sorted index -> token id
    rank: np.ndarray    # [V] int64: token id -> sorted index
    root: int           # the first sorted index of a token with bytes (tokens of no bytes sort first)

    @classmethod
    def of(cls, pieces: list[bytes]) -> Vocab:
        order = sorted(range(len(pieces)), key=lambda i: pieces[i])
        maxlen = max(1, max(len(p) for p in pieces))
        sbytes = np.zeros((len(pieces), maxlen), dtype=np.uint8)
        for s, i in enumerate(order):
            sbytes[s, : len(pieces[i])] = np.frombuffer(pieces[i], dtype=np.uint8)
        sperm = np.asarray(order, dtype=np.int64)
        rank = np.empty_like(sperm)
        rank[sperm] = np.arange(len(pieces))
        slen = np.asarray([len(pieces[i]) for i in order], dtype=np.int64)
        return cls(sbytes, slen, sperm, rank, int(np.sum(slen == 0)))


@dataclass
class State:
    """Everything one group's loop owns: the counting tables (shared by its segments), each segment's
    history, the byte buffer and the coder."""

    ht: np.ndarray
    t01: np.ndarray
    sm: np.ndarray
    w1: np.ndarray
    wf: np.ndarray
    apm1: np.ndarray
    apm2: np.ndarray
    apm3: np.ndarray
    apm4: np.ndarray
    apm5: np.ndarray  # the end flag's: the last byte x the model's p
    mtab: np.ndarray
    msm: np.ndarray
    seg: np.ndarray    # [B, N_STATE]
    last: np.ndarray   # [B, 256] where each byte value was last seen (+1), per segment
    lastd: np.ndarray  # [B, 256] the distance between its last two sightings
    buf: np.ndarray    # [B * cap] the segments' bytes
    cap: int
    coder: np.ndarray  # the arithmetic coder's state
    shared: np.ndarray  # [bytes coded in the group, 1 once the data proved corrupt]
    cum: np.ndarray    # [V + 1] scratch: one row's cumulative counts in sorted order


def table_bytes(level: int, segments: int, cap: int) -> int:
    """The memory a group's loop takes at counting level ``level``: the tables and the byte buffer."""
    tb, mb = table_bits(level)
    return (4 * (N_HASHED << tb) + 4 * 2 * 65536 + 4 * N_MODELS * 8192 + 4 * N_IN * N_SETS + 4 * 256 * (N_MIX + 1)
            + 4 * 33 * (65536 + (1 << APM2_BITS) + 65 * 256 + 32 * 256 + 256 * 32) + 4 * (1 << mb) + 4 * 64
            + segments * (8 * N_STATE + 16 * 256 + cap))


def allocate(level: int, segments: int, cap: int, vocab_size: int) -> State:
    """Fresh state for a group of ``segments`` segments of at most ``cap - 1`` bytes each."""
    tb, mb = table_bits(level)
    half = np.uint32((1 << 21) << 10)
    w1 = np.full((N_SETS, N_IN), 1 << 12, dtype=np.int32)
    w1[:, X_LM] = W_LM
    return State(
        ht=np.full((N_HASHED, 1 << tb), SLOT_INIT, dtype=np.uint32),
        t01=np.full((2, 65536), SLOT_INIT, dtype=np.uint32),
        sm=np.full((N_MODELS, 8192), half, dtype=np.uint32),
        w1=w1,
        wf=np.full((256, N_MIX + 1), 65536 // N_MIX, dtype=np.int32),
        apm1=apm_init(65536), apm2=apm_init(1 << APM2_BITS), apm3=apm_init(65 * 256), apm4=apm_init(32 * 256),
        apm5=apm_init(256 * 32),
        mtab=np.zeros(1 << mb, dtype=np.int32),
        msm=np.full(64, half, dtype=np.uint32),
        seg=np.zeros((segments, N_STATE), dtype=np.int64),
        last=np.zeros((segments, 256), dtype=np.int64), lastd=np.zeros((segments, 256), dtype=np.int64),
        buf=np.zeros(segments * cap, dtype=np.uint8), cap=cap,
        coder=new_state(), shared=np.zeros(2, dtype=np.int64), cum=np.zeros(vocab_size + 1, dtype=np.int64),
    )


def step(encode: bool, s: State, v: Vocab, rows: np.ndarray, counts: np.ndarray, toks: np.ndarray,
         out: np.ndarray, src: np.ndarray) -> np.ndarray:
    """Code one token in each of ``rows`` (segment indices, in order) under the model's ``counts``
    [len(rows), V] (integers in float32, as lmzip.coding.coder takes them): encoding ``toks``, or
    decoding into ``toks``. Returns the output buffer (grown when needed)."""
    return _step(encode, rows, np.ascontiguousarray(counts, dtype=np.float32), toks, out, src,
                 v.sbytes, v.slen, v.sperm, v.rank, v.root,
                 s.ht, s.t01, s.sm, s.w1, s.wf, s.apm1, s.apm2, s.apm3, s.apm4, s.apm5, s.mtab, s.msm,
                 s.seg, s.last, s.lastd, s.buf, s.cap, s.coder, s.shared, s.cum)


def start(s: State, src: np.ndarray) -> None:
    """Prime the decoder with the stream's first bytes."""
    start_decoder(s.coder, src)


@njit(cache=True)
def _grow(out: np.ndarray) -> np.ndarray:
    bigger = np.empty(out.shape[0] * 2 + 4096, dtype=np.uint8)
    bigger[: out.shape[0]] = out
    return bigger


@njit(cache=True)
def _first_at_least(sbytes, a, b, d, thr):
    """The first sorted index in [a, b) whose byte d is >= thr (byte d is non-decreasing there)."""
    while a < b:
        m = (a + b) >> 1
        if sbytes[m, d] < thr:
            a = m + 1
        else:
            b = m
    return a


@njit(cache=True)
def _code_flag(encode, st, out, src, y, p16):
    """Code (or decode) a bit with P(1) = p16 / 65536."""
    if encode:
        encode_bit(st, out, y, p16)
        return y
    return decode_bit(st, src, p16)


@njit(cache=True, nogil=True)
def _step(encode, rows, counts, toks, out, src, sbytes, slen, sperm, rank, root,  # noqa: C901 - one loop, by design
          ht, t01, sm, w1, wf, apm1, apm2, apm3, apm4, apm5, mtab, msm, seg, last, lastd, buf, cap, st, shared, cum):
    nb_mask = (ht.shape[1] >> 4) - 1
    m_mask = mtab.shape[0] - 1
    V = sbytes.shape[0]
    x = np.zeros(N_IN, dtype=np.int64)
    xf = np.zeros(N_MIX + 1, dtype=np.int64)
    ctx = np.zeros(N_HASHED, dtype=np.int64)
    base = np.zeros(N_HASHED, dtype=np.int64)
    for q in range(rows.shape[0]):
        r = rows[q]
        g0 = r * cap
        cum[0] = 0
        for k in range(V):  # the model's counts (each + 1, out of 2^24) in sorted order, summed
            cum[k + 1] = cum[k] + np.int64(counts[q, sperm[k]]) + 1
        target = rank[toks[q]] if encode else 0
        lo, hi, d = root, V, 0
        while True:
            if d > 0 and slen[lo] == d:  # the bytes so far are a token; longer ones may follow
                if hi - lo == 1:
                    break
                if encode:
                    y = 1 if slen[target] == d else 0
                else:
                    y = 0
                p16 = clamp_p(((cum[lo + 1] - cum[lo]) << 16) // (cum[hi] - cum[lo]))
                # the model's p, refined by what ended tokens after this byte before (an APM)
                pe = p16 >> 4
                pe = 1 if pe < 1 else (4095 if pe > 4095 else pe)
                ae, je = apm_p(apm5, (seg[r, C4] & 0xFF) * 32 + ((stretch(pe) + 2048) >> 7), pe)
                p16 = clamp_p((p16 + 3 * ae + 2) >> 2)
                y = _code_flag(encode, st, out, src, y, p16)
                apm_update(apm5, je, y, APM_RATE)
                if y:
                    break
                lo += 1
            if encode and st[3] + 64 > out.shape[0]:
                out = _grow(out)
            if seg[r, FILL] + 2 > cap:  # corrupt data: more bytes than a segment can hold
                shared[1] = 1
                return out
            # --- one byte of the token, through the counting models ---
            c4, c8, w0, wp = seg[r, C4], seg[r, C8], seg[r, W0], seg[r, WP]
            mlen, mptr, k = seg[r, MLEN], seg[r, MPTR], seg[r, FILL]
            rlen = seg[r, RLEN]
            line, pline = seg[r, LINE], seg[r, PLINE]
            i = shared[0]
            c1 = c4 & 0xFF
            c2 = (c4 >> 8) & 0xFF
            lr1 = MIX_LR1 // 2 + ((MIX_LR1 // 2) << 18) // ((1 << 18) + i)
            ctx[0] = hash2(c4 & 0xFFFF, 2)
            ctx[1] = hash2(c4 & 0xFFFFFF, 3)
            ctx[2] = hash2(c4, 4)
            ctx[3] = hash2(c4, (c8 & 0xFF) | 0x500)
            ctx[4] = hash2(hash2(c4, c8), 8)
            ctx[5] = hash2(w0, 7 + (c1 << 8) * (w0 == 0))
            ctx[6] = hash2(w0, wp + 8)
            ctx[7] = hash2(c4 & 0xFFFF00, 9)
            ctx[8] = hash2((c4 >> 24) | ((c8 >> 16) & 0xFF00), 10)
            if rlen > 0 and k >= 2 * rlen:
                up, up2 = np.int64(buf[g0 + k - rlen]), np.int64(buf[g0 + k - 2 * rlen])
                ctx[9] = hash2(up | (c1 << 8) | (rlen << 16), 11)
                ctx[10] = hash2(up | (np.int64(buf[g0 + k - rlen + 1]) << 8)
                                | (np.int64(buf[g0 + k - rlen - 1]) << 16) | (up2 << 24), 12)
            else:
                ctx[9] = hash2(c1, 11)
                ctx[10] = 12
            col = k - line
            above = np.int64(buf[g0 + pline + col]) if pline + col < line else 0
            ctx[11] = hash2(min(col, 255) | (above << 8) | (c1 << 16), 13)
            if mlen > 0:  # the match's next byte must be known: its segment has coded it
                ms = (mptr - 1) // cap
                if mptr - ms * cap >= seg[ms, FILL]:
                    mlen = 0
            ebyte = buf[mptr] if mlen > 0 else 0
            mq = mlen if mlen < 16 else 16 + min((mlen - 16) >> 2, 15)
            mlb = 0 if mlen == 0 else (1 if mlen < 16 else (2 if mlen < 32 else 3))
            tbyte = np.int64(sbytes[target, d]) if encode else 0
            c0 = 1
            for j in range(8):
                if j == 0 or j == 4:
                    for kk in range(N_HASHED):
                        base[kk] = find_bucket(ht, kk, hash2(ctx[kk], c0), nb_mask)
                jj = j << 10
                nib = c0 if j < 4 else ((1 << (j - 4)) | (c0 & ((1 << (j - 4)) - 1)))
                # the model's view: how the range splits on this bit
                pv = c0 - (1 << j)
                mid = _first_at_least(sbytes, lo, hi, d, ((pv << 1) | 1) << (7 - j))
                n0, n1 = cum[mid] - cum[lo], cum[hi] - cum[mid]
                mi = -1
                j1, j2, j3, j4 = 0, 0, 0, 0
                s2 = 0
                df = 0
                forced = n0 == 0 or n1 == 0
                if forced:
                    y = 1 if n0 == 0 else 0
                else:
                    plm = (n1 << 12) // (n0 + n1)
                    plm = 1 if plm < 1 else (4095 if plm > 4095 else plm)
                    slm = stretch(plm)
                    lmq = (slm + 2048) >> 7
                    v = np.int64(t01[0, c0])
                    x[0], x[1] = slot_inputs(v, sm, 0, jj)
                    v = np.int64(t01[1, (c1 << 8) | c0])
                    x[2], x[3] = slot_inputs(v, sm, 1, jj)
                    known = 0
                    for kk in range(N_HASHED):
                        v = np.int64(ht[kk, base[kk] + nib])
                        x[4 + 2 * kk], x[5 + 2 * kk] = slot_inputs(v, sm, 2 + kk, jj)
                        if kk < 5 and (v & 1008) != 0:
                            known += 1
                    if mlen > 0 and ((ebyte | 256) >> (8 - j)) == c0:
                        ebit = (ebyte >> (7 - j)) & 1
                        mi = mq * 2 + ebit
                        x[CM_IN - 3] = stretch(np.int64(msm[mi]) >> 20)
                        x[CM_IN - 2] = (min(mlen, 32) << 5) * (2 * ebit - 1)
                    else:
                        x[CM_IN - 3] = 0
                        x[CM_IN - 2] = 0
                    x[CM_IN - 1] = 256
                    x[X_LM] = slm
                    s2 = ((mlb if mi >= 0 else 0) * 6 + known) * 8 + j
                    xf[0] = mix_dot(w1, SET_C0 + c0, x, N_IN)
                    xf[1] = mix_dot(w1, SET_ST + s2, x, N_IN)
                    xf[2] = mix_dot(w1, SET_C1 + c1, x, N_IN)
                    xf[3] = mix_dot(w1, SET_C2 + c2, x, N_IN)
                    xf[4] = mix_dot(w1, SET_LM + lmq * 8 + j, x, N_IN)
                    xf[5] = 256
                    df = mix_dot(wf, s2, xf, N_MIX + 1)
                    p = sq(df)
                    a1, j1 = apm_p(apm1, (c1 << 8) | c0, p)
                    a2, j2 = apm_p(apm2, hash2(c4 & 0xFFFF, c0) & ((1 << APM2_BITS) - 1), p)
                    a3, j3 = apm_p(apm3, (mi + 1) * 256 + c0, p)
                    a4, j4 = apm_p(apm4, lmq * 256 + c0, p)
                    p = clamp_p((32 * p + a1 + a2 + a3 + 3 * a4 + 4) >> 3)
                    if encode:
                        y = (tbyte >> (7 - j)) & 1
                        encode_bit(st, out, y, p)
                    else:
                        y = decode_bit(st, src, p)
                    mix_train(w1, SET_C0 + c0, x, N_IN, ((y << 12) - sq(xf[0])) * lr1)
                    mix_train(w1, SET_ST + s2, x, N_IN, ((y << 12) - sq(xf[1])) * lr1)
                    mix_train(w1, SET_C1 + c1, x, N_IN, ((y << 12) - sq(xf[2])) * lr1)
                    mix_train(w1, SET_C2 + c2, x, N_IN, ((y << 12) - sq(xf[3])) * lr1)
                    mix_train(w1, SET_LM + lmq * 8 + j, x, N_IN, ((y << 12) - sq(xf[4])) * lr1)
                    mix_train(wf, s2, xf, N_MIX + 1, ((y << 12) - sq(df)) * MIX_LR2)
                    apm_update(apm1, j1, y, APM_RATE)
                    apm_update(apm2, j2, y, APM_RATE)
                    apm_update(apm3, j3, y, APM_RATE)
                    apm_update(apm4, j4, y, APM_RATE)
                # --- every counting model learns the bit, coded or not ---
                v = np.int64(t01[0, c0])
                sm[0, (v & 1023) | jj] = adapt(np.int64(sm[0, (v & 1023) | jj]), y, SM_LIMIT)
                t01[0, c0] = slot_update(v, y, SLOT_LIMIT)
                o1 = (c1 << 8) | c0
                v = np.int64(t01[1, o1])
                sm[1, (v & 1023) | jj] = adapt(np.int64(sm[1, (v & 1023) | jj]), y, SM_LIMIT)
                t01[1, o1] = slot_update(v, y, SLOT_LIMIT)
                for kk in range(N_HASHED):
                    sl = base[kk] + nib
                    v = np.int64(ht[kk, sl])
                    sm[2 + kk, (v & 1023) | jj] = adapt(np.int64(sm[2 + kk, (v & 1023) | jj]), y, SM_LIMIT)
                    ht[kk, sl] = slot_update(v, y, SLOT_LIMIT)
                if mlen > 0 and ((ebyte | 256) >> (8 - j)) == c0:
                    mi2 = mq * 2 + ((ebyte >> (7 - j)) & 1)
                    msm[mi2] = adapt(np.int64(msm[mi2]), y, SM_LIMIT)
                if y:
                    lo = mid
                else:
                    hi = mid
                c0 = (c0 << 1) | y
            c = c0 & 0xFF
            buf[g0 + k] = c
            # --- byte done: slide this segment's contexts ---
            c4, c8, w0, wp = slide(c4, c8, w0, wp, c)
            if c == 10:
                pline, line = line, k + 1
            dd = k + 1 - last[r, c]
            cand, cand_n, rlen = row_length(dd, last[r, c], lastd[r, c], seg[r, CAND], seg[r, CANDN], rlen)
            lastd[r, c] = dd
            last[r, c] = k + 1
            if mlen > 0 and ebyte == c:
                mlen = min(mlen + 1, 65535)
                mptr += 1
            else:
                mlen = 0
            gi = g0 + k  # this byte's position in the buffer
            if k + 1 >= MINLEN:
                hs = hash2(c4, c8 & 0xFFFF) & (m_mask >> 1)
                hl = (hash2(c4, c8) & (m_mask >> 1)) | ((m_mask >> 1) + 1)
                if mlen == 0:
                    for h in (hl, hs):
                        cand = mtab[h]
                        if cand > 0 and mlen == 0:
                            cs = (cand - 1) // cap
                            room = min(cand - cs * cap, k + 1)  # bytes both sides have in their segments
                            ln = 0
                            while ln < 32 and ln < room and buf[cand - 1 - ln] == buf[gi - ln]:
                                ln += 1
                            if ln >= MINLEN:
                                mlen, mptr = ln, cand
                mtab[hs] = gi + 1
                if k + 1 >= 8:
                    mtab[hl] = gi + 1
            seg[r, C4], seg[r, C8], seg[r, W0], seg[r, WP] = c4, c8, w0, wp
            seg[r, MLEN], seg[r, MPTR], seg[r, FILL] = mlen, mptr, k + 1
            seg[r, RLEN], seg[r, CAND], seg[r, CANDN] = rlen, cand, cand_n
            seg[r, LINE], seg[r, PLINE] = line, pline
            shared[0] = i + 1
            d += 1
        toks[q] = sperm[lo]
    return out
