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

# isort: split
from lmzip.cm import body, match  # the context models, shared with counting's loop (lmzip.cm.model)
from lmzip.cm.coder import decode_bit, encode_bit, new_state, start_decoder
from lmzip.cm.history import C4, FILL, MLEN, N_STATE
from lmzip.cm.mixers import APM2_BITS, APM_RATE, MIX_LR1, MIX_LR2
from lmzip.cm.model import N_SETS as CM_SETS
from lmzip.cm.model import SET_C0, SET_C1, SET_C2, SET_ST, Tables, table_bits
from lmzip.cm.parts import SKIP_ERR, SLOT_INIT, apm_init, apm_p, apm_update, clamp_p, hash2, mix_dot, mix_train, sq
from lmzip.cm.tables import stretch

# The counting models' version the mixed loop runs: 1 (format 11 records no other; counting alone runs
# lmzip.cm.format.VERSION)
CM_VERSION = 1
N_HASHED, N_MODELS, CM_IN = body.n_hashed(CM_VERSION), body.n_models(CM_VERSION), body.n_inputs(CM_VERSION)
WAYS = body.n_ways(CM_VERSION)
X_MATCH = CM_IN - 3     # the match model's two inputs, then the bias
N_IN = CM_IN + 1        # the counting inputs, then the language model's stretched p
X_LM = CM_IN            # its index
SET_LM = CM_SETS        # the fifth mixer's weight sets: the model's p (32 buckets) x bit position
N_SETS = SET_LM + 32 * 8
N_MIX = 5
W_LM = 1 << 15          # the model's start weight in every first-layer mixer (the others start at 1/16)


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
    """Everything one group's loop owns: the counting tables (shared by its segments: counting's own
    record, its mixers sized for the model's inputs too), two more APM stages, each segment's history,
    the byte buffer and the coder."""

    cm: Tables
    apm4: np.ndarray
    apm5: np.ndarray  # the end flag's: the last byte x the model's p
    seg: np.ndarray    # [B, N_STATE]: each segment's history (lmzip.cm.body)
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
    none = np.zeros((0, 1), dtype=np.uint32)  # cm version 1 has no image, run or indirect models
    cm = Tables(
        ht=np.full((N_HASHED, 1 << tb), SLOT_INIT, dtype=np.uint32),
        t01=np.full((2, 65536), SLOT_INIT, dtype=np.uint32),
        sm=np.full((N_MODELS, 8192), half, dtype=np.uint32),
        w1=w1,
        wf=np.full((256, N_MIX + 1), 65536 // N_MIX, dtype=np.int32),
        apm1=apm_init(65536), apm2=apm_init(1 << APM2_BITS), apm3=apm_init(65 * 256),
        mtab=np.zeros(1 << mb, dtype=np.int32),
        msm=np.full(64, half, dtype=np.uint32),
        it=none, rsm=none, ind=np.zeros(0, dtype=np.uint16), em=np.zeros(0, dtype=np.uint32),
        ltab=np.zeros(0, dtype=np.int32), lsm=np.zeros(0, dtype=np.uint32),
    )
    return State(
        cm=cm, apm4=apm_init(32 * 256), apm5=apm_init(256 * 32),
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
    t = s.cm
    tables = (t.ht, t.t01, t.sm, t.w1, t.wf, t.apm1, t.apm2, t.apm3, s.apm4, s.apm5, t.mtab, t.msm)
    return _step(encode, rows, np.ascontiguousarray(counts, dtype=np.float32), toks, (out, src),
                 (v.sbytes, v.slen, v.sperm, v.rank, v.root), tables, (s.seg, s.last, s.lastd, s.buf, s.cap),
                 (s.coder, s.shared, s.cum))


def start(s: State, payload: bytes) -> np.ndarray:
    """Prime the decoder with the stream's first bytes; returns the payload as `step` takes it (a writable
    copy: the encoder's buffer is writable too, so both sides run one compiled loop, not two)."""
    src = np.array(np.frombuffer(payload, dtype=np.uint8))
    start_decoder(s.coder, src)
    return src


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
def _code_bit(encode, st, out, src, y, p16):
    """Code (or decode) a bit with P(1) = p16 / 65536."""
    if encode:
        encode_bit(st, out, y, p16)
        return y
    return decode_bit(st, src, p16)


@njit(cache=True, nogil=True)
def _step(encode, rows, counts, toks, io, voc, tables, segs, coding):
    out, src = io
    sbytes, slen, sperm, rank, root = voc
    seg, cap = segs[0], segs[4]
    st, shared, cum = coding
    V = sbytes.shape[0]
    work = (np.zeros(N_IN, dtype=np.int64), np.zeros(N_MIX + 1, dtype=np.int64), np.zeros(N_MIX, dtype=np.int64),
            np.zeros(N_HASHED, dtype=np.int64), np.zeros(N_HASHED, dtype=np.int64), np.zeros(6, dtype=np.int64))
    for q in range(rows.shape[0]):
        r = rows[q]
        cum[0] = 0
        for k in range(V):  # the model's counts (each + 1, out of 2^24) in sorted order, summed
            cum[k + 1] = cum[k] + np.int64(counts[q, sperm[k]]) + 1
        target = rank[toks[q]] if encode else 0
        lo, hi, d = root, V, np.int64(0)  # not a literal 0: _byte compiles once, not twice
        while True:
            if d > 0 and slen[lo] == d:  # the bytes so far are a token; longer ones may follow
                if hi - lo == 1:
                    break
                y = 1 if encode and slen[target] == d else 0
                if _ends(encode, (st, out, src), tables[9], cum, lo, hi, seg[r, C4], y):
                    break
                lo += 1
            if encode and st[3] + 64 > out.shape[0]:
                out = _grow(out)
            if seg[r, FILL] + 2 > cap:  # corrupt data: more bytes than a segment can hold
                shared[1] = 1
                return out
            tbyte = np.int64(sbytes[target, d]) if encode else 0
            lo, hi = _byte(encode, (st, out, src), tables, segs, shared, (sbytes, cum, lo, hi, d), r, tbyte, work)
            d += 1
        toks[q] = sperm[lo]
    return out


@njit(cache=True)
def _ends(encode, coder, apm5, cum, lo, hi, c4, y):
    """The end flag: whether the token ends with the bytes so far, coded with the model's own probability
    (the token's count over the range's), refined by what ended tokens after this byte before (an APM)."""
    st, out, src = coder
    p16 = clamp_p(((cum[lo + 1] - cum[lo]) << 16) // (cum[hi] - cum[lo]))
    pe = p16 >> 4
    pe = 1 if pe < 1 else (4095 if pe > 4095 else pe)
    ae, je = apm_p(apm5, (c4 & 0xFF) * 32 + ((stretch(pe) + 2048) >> 7), pe)
    p16 = clamp_p((p16 + 3 * ae + 2) >> 2)
    y = _code_bit(encode, st, out, src, y, p16)
    apm_update(apm5, je, y, APM_RATE)
    return y


@njit(cache=True)
def _byte(encode, coder, tables, segs, shared, walk, r, tbyte, work):
    """One byte of segment r's token, through the counting models: each bit splits the token range
    [lo, hi) (byte d of the sorted tokens); a bit only one side of the range has is not coded, the
    others are coded mixed. Returns the range left."""
    st, out, src = coder
    ht, t01, sm = tables[0], tables[1], tables[2]
    seg, last, lastd, buf, cap = segs
    sbytes, cum, lo, hi, d = walk
    x, ctx, base = work[0], work[3], work[4]
    h, g0, i = seg[r], r * cap, shared[0]
    c4 = h[C4]
    c1 = c4 & 0xFF
    lr1 = MIX_LR1 // 2 + ((MIX_LR1 // 2) << 18) // ((1 << 18) + i)
    body.contexts(ctx, h, buf, g0)
    ebyte = match.match_byte(h, seg, buf, cap)
    mq, mlb = match.match_quant(h[MLEN])
    c0 = 1
    for j in range(8):
        if j == 0 or j == 4:
            body.buckets(ht, base, ctx, c0, (ht.shape[1] >> 4) - 1, WAYS)
        nib = c0 if j < 4 else ((1 << (j - 4)) | (c0 & ((1 << (j - 4)) - 1)))
        # the model's view: how the range splits on this bit
        mid = _first_at_least(sbytes, lo, hi, d, ((((c0 - (1 << j)) << 1) | 1) << (7 - j)))
        n0, n1 = cum[mid] - cum[lo], cum[hi] - cum[mid]
        mi = match.match_index(h[MLEN], ebyte, mq, c0, j)
        if n0 == 0 or n1 == 0:
            y = 1 if n0 == 0 else 0
        else:
            plm = (n1 << 12) // (n0 + n1)
            plm = 1 if plm < 1 else (4095 if plm > 4095 else plm)
            known = body.inputs(x, t01, ht, sm, base, nib, c0, c1, j)
            match.match_inputs(x, X_MATCH, tables[11], mi, h[MLEN])
            p = _mixed_p(tables, work, (c0, c4, j, mi, mlb, known, stretch(plm)))
            y = _code_bit(encode, st, out, src, (tbyte >> (7 - j)) & 1, p)
            _mixed_learn(tables, work, y, lr1)
        # --- every counting model learns the bit, coded or not ---
        body.learn(t01, ht, sm, base, nib, c0, c1, j, y)
        match.match_learn(tables[11], mi, y)
        if y:
            lo = mid
        else:
            hi = mid
        c0 = (c0 << 1) | y
    body.byte_done(h, c0 & 0xFF, buf, g0, cap, last[r], lastd[r], tables[10], ebyte, False)
    shared[0] = i + 1
    return lo, hi


@njit(cache=True, inline="always")
def _mixed_p(tables, work, at):
    """The mixed probability (16 bits) of the next bit, the language model's stretched p among the inputs;
    the mixers' outputs and the APM entries to train stay in ``work``."""
    w1, wf, apm1, apm2, apm3, apm4 = tables[3], tables[4], tables[5], tables[6], tables[7], tables[8]
    x, xf, sets, aj = work[0], work[1], work[2], work[5]
    c0, c4, j, mi, mlb, known, slm = at
    c1, c2 = c4 & 0xFF, (c4 >> 8) & 0xFF
    lmq = (slm + 2048) >> 7
    x[X_LM] = slm
    s2 = ((mlb if mi >= 0 else 0) * 6 + known) * 8 + j
    sets[0], sets[1], sets[2], sets[3] = SET_C0 + c0, SET_ST + s2, SET_C1 + c1, SET_C2 + c2
    sets[4] = SET_LM + lmq * 8 + j
    xf[0] = mix_dot(w1, sets[0], x, N_IN)  # written out: a loop over the sets ran ~25% slower
    xf[1] = mix_dot(w1, sets[1], x, N_IN)
    xf[2] = mix_dot(w1, sets[2], x, N_IN)
    xf[3] = mix_dot(w1, sets[3], x, N_IN)
    xf[4] = mix_dot(w1, sets[4], x, N_IN)
    xf[N_MIX] = 256
    df = mix_dot(wf, s2, xf, N_MIX + 1)
    aj[4], aj[5] = s2, df
    p = sq(df)
    a1, aj[0] = apm_p(apm1, (c1 << 8) | c0, p)
    a2, aj[1] = apm_p(apm2, hash2(c4 & 0xFFFF, c0) & ((1 << APM2_BITS) - 1), p)
    a3, aj[2] = apm_p(apm3, (mi + 1) * 256 + c0, p)
    a4, aj[3] = apm_p(apm4, lmq * 256 + c0, p)
    return clamp_p((32 * p + a1 + a2 + a3 + 3 * a4 + 4) >> 3)


@njit(cache=True, inline="always")
def _mixed_learn(tables, work, y, lr1):
    """The mixers and APM stages of ``_mixed_p`` after bit ``y``."""
    w1, wf, apm1, apm2, apm3, apm4 = tables[3], tables[4], tables[5], tables[6], tables[7], tables[8]
    x, xf, sets, aj = work[0], work[1], work[2], work[5]
    mix_train(w1, sets[0], x, N_IN, ((y << 12) - sq(xf[0])) * lr1, SKIP_ERR)  # _mixed_p's weight sets, in order
    mix_train(w1, sets[1], x, N_IN, ((y << 12) - sq(xf[1])) * lr1, SKIP_ERR)
    mix_train(w1, sets[2], x, N_IN, ((y << 12) - sq(xf[2])) * lr1, SKIP_ERR)
    mix_train(w1, sets[3], x, N_IN, ((y << 12) - sq(xf[3])) * lr1, SKIP_ERR)
    mix_train(w1, sets[4], x, N_IN, ((y << 12) - sq(xf[4])) * lr1, SKIP_ERR)
    mix_train(wf, aj[4], xf, N_MIX + 1, ((y << 12) - sq(aj[5])) * MIX_LR2, SKIP_ERR)
    apm_update(apm1, aj[0], y, APM_RATE)
    apm_update(apm2, aj[1], y, APM_RATE)
    apm_update(apm3, aj[2], y, APM_RATE)
    apm_update(apm4, aj[3], y, APM_RATE)
