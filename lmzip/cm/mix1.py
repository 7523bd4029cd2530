"""Format 11's mixed loop: the counting models of cm version 1 beside the language model (lmzip.cm.mix explains
the mixing; format 12 runs a newer version through the loop counting alone runs, lmzip.cm.loop). Kept so that every
format-11 file decodes; nothing writes it any more."""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm import jitcache  # noqa: F401 - first: clears a stale compiled loop before numba loads it

# isort: split
from lmzip.cm import body, match, sizes  # the context models, shared with counting's loop (lmzip.cm.model)
from lmzip.cm.history import C4, FILL, MLEN, N_STATE
from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.loop import N_SETS as CM_SETS
from lmzip.cm.loop import SET_C0, SET_C1, SET_C2, SET_ST
from lmzip.cm.mixers import APM2_BITS, APM_RATE, MIX_LR1, MIX_LR2
from lmzip.cm.model import Tables, table_bits
from lmzip.cm.parts import SKIP_ERR, SLOT_INIT, apm_init, apm_p, apm_update, clamp_p, hash2, mix_dot, mix_train, sq
from lmzip.cm.tables import stretch
from lmzip.cm.walk import code_bit, cumulate, ends, first_at_least, grow

CM_VERSION = 1  # the counting models' version
N_HASHED, N_MODELS, CM_IN = sizes.n_hashed(CM_VERSION), sizes.n_models(CM_VERSION), sizes.n_inputs(CM_VERSION)
WAYS = sizes.n_ways(CM_VERSION)
X_MATCH = CM_IN - 3     # the match model's two inputs, then the bias
N_IN = CM_IN + 1        # the counting inputs, then the language model's stretched p
X_LM = CM_IN            # its index
SET_LM = CM_SETS        # the fifth mixer's weight sets: the model's p (32 buckets) x bit position
N_SETS = SET_LM + 32 * 8
N_MIX = 5
W_LM = 1 << 15          # the model's start weight in every first-layer mixer (the others start at 1/16)


def table_bytes(level: int, segments: int, cap: int) -> int:
    """The memory a group's loop takes at counting level ``level``: the tables and the byte buffer."""
    tb, mb = table_bits(level)
    return (4 * (N_HASHED << tb) + 4 * 2 * 65536 + 4 * N_MODELS * 8192 + 4 * N_IN * N_SETS + 4 * 256 * (N_MIX + 1)
            + 4 * 33 * (65536 + (1 << APM2_BITS) + 65 * 256 + 32 * 256 + 256 * 32) + 4 * (1 << mb) + 4 * 64
            + segments * (8 * N_STATE + 16 * 256 + cap))


def allocate_tables(level: int) -> Tables:
    """Fresh counting tables of cm version 1 at ``level``, its mixers sized for the model's input and mixer."""
    tb, mb = table_bits(level)
    half = np.uint32((1 << 21) << 10)
    w1 = np.full((N_SETS, N_IN), 1 << 12, dtype=np.int32)
    w1[:, X_LM] = W_LM
    none = np.zeros((0, 1), dtype=np.uint32)  # cm version 1 has no image, run or indirect models
    return Tables(
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



@njit(cache=True, nogil=True)
def step1(encode, rows, counts, toks, io, voc, tables, segs, coding):
    out, src = io
    sbytes, slen, sperm, rank, root = voc
    seg, cap = segs[0], segs[4]
    st, shared, cum = coding
    V = sbytes.shape[0]
    work = (np.zeros(N_IN, dtype=np.int64), np.zeros(N_MIX + 1, dtype=np.int64), np.zeros(N_MIX, dtype=np.int64),
            np.zeros(N_HASHED, dtype=np.int64), np.zeros(N_HASHED, dtype=np.int64), np.zeros(6, dtype=np.int64))
    for q in range(rows.shape[0]):
        r = rows[q]
        cumulate(cum, counts, q, sperm)
        target = rank[toks[q]] if encode else 0
        lo, hi, d = root, V, np.int64(0)  # not a literal 0: _byte compiles once, not twice
        while True:
            if d > 0 and slen[lo] == d:  # the bytes so far are a token; longer ones may follow
                if hi - lo == 1:
                    break
                y = 1 if encode and slen[target] == d else 0
                if ends(encode, (st, out, src), tables[9], cum, lo, hi, seg[r, C4], y):
                    break
                lo += 1
            if encode and st[3] + 64 > out.shape[0]:
                out = grow(out)
            if seg[r, FILL] + 2 > cap:  # corrupt data: more bytes than a segment can hold
                shared[1] = 1
                return out
            tbyte = np.int64(sbytes[target, d]) if encode else 0
            lo, hi = _byte(encode, (st, out, src), tables, segs, shared, (sbytes, cum, lo, hi, d), r, tbyte, work)
            d += 1
        toks[q] = sperm[lo]
    return out


@njit(**UNCOUNTED)
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
        mid = first_at_least(sbytes, lo, hi, d, ((((c0 - (1 << j)) << 1) | 1) << (7 - j)))
        n0, n1 = cum[mid] - cum[lo], cum[hi] - cum[mid]
        mi = match.match_index(h[MLEN], ebyte, mq, c0, j)
        if n0 == 0 or n1 == 0:
            y = 1 if n0 == 0 else 0
        else:
            plm = (n1 << 12) // (n0 + n1)
            plm = 1 if plm < 1 else (4095 if plm > 4095 else plm)
            known = body.inputs(x, t01, ht, sm, base, nib, c0, c1, j, -1)
            match.match_inputs(x, X_MATCH, tables[11], mi, h[MLEN])
            p = _mixed_p(tables, work, (c0, c4, j, mi, mlb, known, stretch(plm)))
            y = code_bit(encode, st, out, src, (tbyte >> (7 - j)) & 1, p)
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
