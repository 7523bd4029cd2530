"""One byte and one bit of every counting model: what counting's loop (`model`) and the mixed loop (`mix`, cm
version 2 on) share, so a context model is written once and both loops run it.

A loop calls, per byte, `byte_start` (the contexts of the byte to come, what the matches expect), per nibble
the contexts' buckets (`lmzip.cm.body.bucket_ask`, `bucket_find`), per bit `bit_sets` (the mixers' weight sets),
`bit_inputs` (every model's inputs into ``x``), `bit_mix` (the mixers over them), then its own refining and coding,
`bit_learn` and `mixed_learn`, and per byte `byte_end` (the histories after the byte). Every function takes the
stream's bytes at buf[g0:] in a buffer of segments of ``cap`` bytes (counting: one stream, g0 = 0) and its history
``h``, a row of ``hist`` (one row per segment in the mixed loop). Both loops split `byte_start` (`byte_sets`,
`byte_contexts`) and a nibble's lookups to ask for the memory a bit early, while the mixers learn (the mixed loop
where the token surely goes on); the order of what each reads and writes stays the same, and so do the bytes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.body import bucket_ask, byte_done, contexts, inputs, learn, pick
from lmzip.cm.clauses import AT as CLAUSES_AT
from lmzip.cm.clauses import clause_done, line_done
from lmzip.cm.fields import AT as FIELDS_AT
from lmzip.cm.fields import phrase_done
from lmzip.cm.groups import AT as GROUPS_AT
from lmzip.cm.groups import group_done
from lmzip.cm.history import C4, FILL, LLEN, LPTR, MLEN, TYPES, W0, WLEN, WP, WPP
from lmzip.cm.image import N_IMAGE5, image_bit, image_gate, image_learn, image_sets, row_done
from lmzip.cm.letters import AT as LETTERS_AT
from lmzip.cm.letters import letter_done
from lmzip.cm.match import (
    ebyte_index,
    ebyte_inputs,
    ebyte_learn,
    match_byte,
    match_index,
    match_inputs,
    match_learn,
    match_quant,
)
from lmzip.cm.mixers import ORDERS_END, final_sets, miss_sets, misses, mix, mix_learn, refine_learn
from lmzip.cm.orders import AT as ORDERS_AT
from lmzip.cm.orders import order3_set
from lmzip.cm.parts import prefetch
from lmzip.cm.run import (
    IND_BYTES,
    WORDS_AT,
    indirect_contexts,
    indirect_done,
    run_done,
    run_inputs,
    run_learn,
    token,
    token_contexts,
    token_done,
    word_indirect_contexts,
    word_indirect_done,
)
from lmzip.cm.text import SHAPE_BITS, long_done, long_index, long_inputs, shape_set, space_set, text_done, word_done

MIX2_SETS = 4 * 6 * 8  # match-length bucket x known high orders (0..5) x bit position
# the first-layer weight sets, one array: by partial byte c0, by match/orders state, by the previous
# byte, by the byte before it
SET_C0, SET_ST, SET_C1 = 0, 256, 256 + MIX2_SETS
SET_C2 = SET_C1 + 256
N_SETS = SET_C2 + 256
SET_C21 = N_SETS       # version 3: the fifth mixer's sets, by the last two bytes (version 18: three, hashed)
SET_TYPES = SET_C21 + 65536  # version 6: the sixth mixer's, by the partial byte x the last two bytes' types x
# the word's length (0-3)
SET_GROUP = SET_TYPES + 65536  # version 13: the group mixers' sets (`group_bounds`): the models from 7 on by the
GROUP_SETS = 1 << 15  # partial byte x the word's length (0-15) x the last byte's type (GROUP_SETS), then the
SET_ORDERS = SET_GROUP + GROUP_SETS  # orders by the partial byte x the previous byte (65536)
SET_SHAPE = SET_ORDERS + 65536  # version 17: the shape mixer's sets (lmzip.cm.text.shape_set), then the spacing
SET_SPACE = SET_SHAPE + (1 << SHAPE_BITS)  # mixer's (`space_set`); the group mixers stay the last two
SHAPE_SETS = 2 << SHAPE_BITS


def group_bounds(n_count: int, models: int) -> np.ndarray:
    """Where version 13's two group mixers sit among counting's ``n_count`` first-layer mixers (8; fewer: none) and
    the end of their first group's inputs: models 7 on (the words, text, lines, columns, indirect and sparse models,
    x[14:2 * models]); the second weighs the orders (x[:14], lmzip.cm.mixers.ORDERS_END)."""
    return np.array([n_count - 2 if n_count >= 8 else -9, 2 * models], dtype=np.int64)


@njit(cache=True, inline="always")
def scratch(w1, wf, ht, it, rsm, ltab, groups, start, span):
    """A loop's work arrays, sized by the version's tables (the mixed loop's w1 and wf hold the language model's
    input and mixer too; ``groups``: `group_bounds`; ``start``: w1's start weights where its rows start as zeros,
    [0] where they are filled, `fresh_rows`'s array; ``span``: the contexts the version computes,
    lmzip.cm.sizes.n_contexts)."""
    ctx = np.zeros(ht.shape[0], dtype=np.int64)
    full = np.zeros(span, dtype=np.int64) if span != ht.shape[0] else ctx
    return (np.zeros(w1.shape[1], dtype=np.int32),    # x: the mixers' inputs (each within +-2^11)
            np.zeros(wf.shape[1], dtype=np.int64),    # xf: the first layer's outputs, then the bias
            np.zeros(wf.shape[1] - 1, dtype=np.int64),  # sel: each first-layer mixer's weight set for this bit
            np.zeros(8, dtype=np.int64),              # aj: each APM stage's entry to update (version 22: 8)
            ctx,                                      # ctx: per hashed model, its context hash for this byte
            np.zeros(ht.shape[0], dtype=np.int64),    # base: per hashed model, the current nibble's bucket
            np.full(max(1, it.shape[0]), -1, dtype=np.int64),  # ictx: the image model's contexts (-1: off)
            np.zeros(rsm.shape[0], dtype=np.int64),   # rpos: per run context, its first nibble's bucket
            np.zeros(rsm.shape[0], dtype=np.int64),   # rinfo: its run as the byte started
            np.full(rsm.shape[0], -1, dtype=np.int64),  # ridx: its state-map entry for this bit (-1: none)
            np.zeros(w1.shape[0] if ltab.shape[0] else 0, dtype=np.int64),  # wn: version 5, each weight set's uses
            groups,
            np.zeros(10, dtype=np.int64),  # fin: the final mixer's outputs and their weight sets (`mix`), the misses
            # register and the last refined p (version 16, `misses`)
            start,
            full)  # every context computed (version 26: more than its rows, `pick`; before it ``ctx`` itself)


@njit(cache=True, inline="always")
def span_of(work):
    """How many contexts the version computes (`scratch`'s ``span``: its last array's length)."""
    return work[14].shape[0]


@njit(cache=True, inline="always")
def long_byte(h, hist, buf, cap):
    """The byte the long match of history ``h`` expects, or 0; dropped, as `match_byte` drops the match, where its
    segment has not coded that byte yet (one stream: never)."""
    if h[LLEN] > 0:
        ms = (h[LPTR] - 1) // cap
        if h[LPTR] - ms * cap >= hist[ms, FILL]:
            h[LLEN] = 0
    return np.int64(buf[h[LPTR]]) if h[LLEN] > 0 else 0


@njit(cache=True, inline="always")
def byte_start(tables, work, h, hist, buf, g0, cap):
    """The contexts of the byte after history ``h`` and the weight sets the last bytes choose; returns what the
    matches expect: (the match's byte, the long match's byte, the match length's two buckets)."""
    byte_sets(span_of(work), work[2], h[C4])
    return byte_contexts(tables, work, h, hist, buf, g0, cap)


@njit(cache=True, inline="always")
def byte_ask(tables, work, h, hist, buf, cap, nb_mask, ways):
    """Counting's start of the byte after history ``h`` (one stream): `byte_contexts`, then its first nibble's blocks
    asked for (`lmzip.cm.body.bucket_ask`); returns what the matches expect."""
    expect = byte_contexts(tables, work, h, hist, buf, 0, cap)
    bucket_ask(tables[0], work[5], work[4], 1, nb_mask, ways)
    return expect


@njit(cache=True, inline="always")
def byte_sets(span, sel, c4):
    """The first-layer weight sets the last bytes ``c4`` choose for the byte to come (`byte_start`'s first half;
    ``span``: the contexts the version computes)."""
    sel[2], sel[3] = SET_C1 + (c4 & 0xFF), SET_C2 + ((c4 >> 8) & 0xFF)
    if sel.shape[0] > 4:
        sel[4] = SET_C21 + (order3_set(c4) if span > ORDERS_AT else c4 & 0xFFFF)


@njit(cache=True, inline="always")
def byte_contexts(tables, work, h, hist, buf, g0, cap):
    """`byte_start`'s second half: the contexts and what the matches expect; it leaves the weight sets the bits
    of the byte before still train (a loop may call it before they do)."""
    ht, t01, sm, w1, wf, apm1, apm2, apm3, mtab, msm, it, rsm, ind, em, ltab, lsm = tables
    ctx = work[14]
    c4 = h[C4]
    contexts(ctx, h, buf, g0)
    if ind.shape[0]:
        indirect_contexts(ctx, ind, c4)
    tok = token(h)
    if ind.shape[0] > IND_BYTES:
        token_contexts(ctx, ind, tok, h[WLEN], c4)
    if ind.shape[0] > WORDS_AT:
        word_indirect_contexts(ctx, ind, tok, h[WP], h[WPP])
    ebyte = match_byte(h, hist, buf, cap)
    lbyte = long_byte(h, hist, buf, cap) if ltab.shape[0] else np.int64(0)
    mq, mlb = match_quant(h[MLEN])
    pick(ctx, work[4])
    return ebyte, lbyte, mq, mlb


@njit(cache=True, inline="always")
def bit_inputs(tables, work, h, buf, g0, at, expect, gate):
    """Every model's inputs for bit ``j`` of partial byte ``c0`` (``at``: c0, the previous byte, j) into the
    work's ``x``; returns (the nibble's slot, how many high orders know the context, the match's, expected
    byte's and long match's state-map entries, the image model's weight set and APM context)."""
    ht, t01, sm, w1, wf, apm1, apm2, apm3, mtab, msm, it, rsm, ind, em, ltab, lsm = tables
    x, base, ictx, rinfo, ridx = work[0], work[5], work[6], work[8], work[9]
    c0, c1, j = at
    ebyte, lbyte, mq, mlb = expect
    x_image = 2 * ht.shape[0] + 4
    x_run = x_image + it.shape[0]
    x_match = x_run + rsm.shape[0] + (2 if ltab.shape[0] else 0) + (1 if em.shape[0] else 0)
    nib = c0 if j < 4 else ((1 << (j - 4)) | (c0 & ((1 << (j - 4)) - 1)))
    known = inputs(x, t01, ht, sm, base, nib, c0, c1, j, x_match + 3 if ht.shape[0] > 30 else -1)
    mi = match_index(h[MLEN], ebyte, mq, c0, j)
    match_inputs(x, x_match, msm, mi, h[MLEN])
    ei = ebyte_index(mi, mlb, ebyte, c1, j)
    ebyte_inputs(x, x_match - 1, em, ei)
    li = -1
    if ltab.shape[0]:
        li = long_index(h[LLEN], lbyte, ebyte, mi, c0, j)
        long_inputs(x, x_match - 3, lsm, li, h[LLEN])
    iset, ik = image_bit(x, x_image, it, ictx, h, buf, g0, c0, c1, j, gate)
    run_inputs(x, x_run, rsm, rinfo, ridx, c0, j)
    return nib, known, mi, ei, li, iset, ik


@njit(cache=True, inline="always")
def bit_sets(w1, work, h, c0, c4, n_mix):
    """The first-layer weight sets partial byte ``c0`` chooses (all but the match/orders state's, sel[1], and the
    image model's: `bit_mix`), the part of each chosen row of ``w1`` its mixer weighs (`mixer_span`) asked into the
    cache while the models' inputs are read (a loop calls it before `bit_inputs`)."""
    sel = work[2]
    sel[0] = SET_C0 + c0
    if n_mix >= 6:
        sel[5] = SET_TYPES + (c0 | ((h[TYPES] & 0x3F) << 8) | (min(h[WLEN], 3) << 14))
    if n_mix >= 8:
        sel[n_mix - 2] = SET_GROUP + (c0 | (min(h[WLEN], 15) << 8) | ((h[TYPES] & 7) << 12))
        sel[n_mix - 1] = SET_ORDERS + (c0 | ((c4 & 0xFF) << 8))
    if n_mix >= 10:
        sel[6], sel[7] = SET_SHAPE + shape_set(h, c0), SET_SPACE + space_set(h, c0)
    for k in range(n_mix):
        if k != 1:
            lo, hi = mixer_span(k, work[11], w1.shape[1])
            for q in range(lo, hi, 16):
                prefetch(w1, sel[k], q)
            prefetch(w1, sel[k], hi - 1)


@njit(cache=True, inline="always")
def mixer_span(k, groups, width):
    """The inputs first-layer mixer ``k`` weighs (lmzip.cm.mixers.group_dot): version 13's group mixers a part of
    their row, the others all ``width``."""
    if k == groups[0]:
        return ORDERS_END, groups[1]
    if k == groups[0] + 1:
        return 0, ORDERS_END
    return 0, width


@njit(cache=True, inline="always")
def fresh_rows(w1, sel, wn, start, settled):
    """Each chosen row of ``w1`` no bit has used yet (``wn``: each set's uses) given its start weights, where the
    rows start as zeros (start[0] > 0: memory a short input never chooses is never touched; before version 27 the same
    bytes as rows filled at the start); the mixed loop's start[1]: the language model's input's, its last column
    (lmzip.cm.mix). Version 27 (``settled``):
    the match/orders state's set (mixer 1's, chosen every bit, so the first to learn) starts so, and every other
    fresh row starts as a copy of it: what the mixers learned of the inputs so far, not 1/32 each."""
    if start[0] <= 0:
        return
    for k in range(sel.shape[0]):
        if wn[sel[k]] == 0 and (not settled or k == 1):
            w1[sel[k], :] = start[0]
            if start.shape[0] > 1:
                w1[sel[k], w1.shape[1] - 1] = start[1]
    if settled:
        s = sel[1]
        for k in range(sel.shape[0]):
            if k != 1 and wn[sel[k]] == 0:
                for i in range(w1.shape[1]):
                    w1[sel[k], i] = w1[s, i]


@njit(cache=True, inline="always")
def bit_mix(tables, work, h, at, seen, gate, n_mix, settled):
    """The first-layer mixers (the first ``n_mix``: counting's; weight sets by the match/orders state, the image
    model's, and those `bit_sets` chose: the partial byte, version 6 the types, version 13's two group mixers (the
    last two) the word's length and the last byte's type, the previous byte; version 17 the text's shape and spacing)
    and the final mixer over the inputs in ``x`` (its weight sets: `final_sets`, `mix`; fresh ones: `fresh_rows`);
    returns its output (stretched)."""
    w1, wf = tables[3], tables[4]
    x, xf, sel = work[0], work[1], work[2]
    c0, c4, j = at
    known, mi, mlb, iset = seen
    s2 = ((mlb if mi >= 0 else 0) * 6 + known) * 8 + j
    sel[1] = SET_ST + s2
    if n_mix >= 6:
        s2 = image_sets(sel, SET_TYPES, iset, s2, gate)
    fresh_rows(w1, sel, work[10], work[13], settled)
    wide = miss_sets(wf)  # version 16: the first final set by the misses too, not where the image model chooses it
    final_sets(work[12], s2, c0, c4, misses(work[12]) if wide and iset <= 0 else 0, wide)
    return mix(w1, wf, x, xf, sel, work[11], work[12])


@njit(cache=True, inline="always")
def bit_learn(tables, work, at, seen, y):
    """Every model's tables after bit ``y`` (``at``: the nibble's slot, c0, the previous byte, j; ``seen``: the
    entries `bit_inputs` returned); the mixers and APMs learn apart (`mixed_learn`)."""
    ht, t01, sm, w1, wf, apm1, apm2, apm3, mtab, msm, it, rsm, ind, em, ltab, lsm = tables
    base, ictx, ridx = work[5], work[6], work[9]
    nib, c0, c1, j = at
    mi, ei, li = seen
    learn(t01, ht, sm, base, nib, c0, c1, j, y)
    match_learn(msm, mi, y)
    image_learn(it, ictx, y)
    run_learn(rsm, ridx, y)
    ebyte_learn(em, ei, y)
    if li >= 0:
        match_learn(lsm, li, y)


@njit(cache=True, inline="always")
def mixed_learn(tables, work, y, rates, six):
    """The mixers (``rates``: the first layer's and the final mixer's) and the three APM stages after bit ``y``."""
    w1, wf, apm1, apm2, apm3 = tables[3], tables[4], tables[5], tables[6], tables[7]
    x, xf, sel, aj, wn = work[0], work[1], work[2], work[3], work[10]
    mix_learn(w1, wf, x, xf, sel, y, rates[0], rates[1], wn, six, work[11], work[12])
    refine_learn((apm1, apm2, apm3), aj, y, six, work[12])


@njit(cache=True, inline="always")
def byte_end(tables, work, h, cb, buf, g0, cap, last, lastd, expect, gate):
    """The histories after byte ``cb``: the image gate, the runs, the indirect models', the body's (`byte_done`),
    version 5's text and long match."""
    ht, t01, sm, w1, wf, apm1, apm2, apm3, mtab, msm, it, rsm, ind, em, ltab, lsm = tables
    rpos, rinfo = work[7], work[8]
    ebyte, lbyte = expect[0], expect[1]
    c4 = h[C4]
    if it.shape[0]:
        image_gate(gate, cb, c4, it.shape[0] > N_IMAGE5)
    run_done(ht, rpos, rinfo, cb)
    if ind.shape[0]:
        indirect_done(ind, c4, cb)
    w_before, wp_before, wpp_before = h[W0], h[WP], h[WPP]
    if ind.shape[0] > IND_BYTES:
        token_done(ind, token(h), cb)  # the token c followed (the histories move on below)
    if it.shape[0] > N_IMAGE5 and last[cb] > 0:
        row_done(h, h[FILL] + 1 - last[cb], lastd[cb])
    byte_done(h, cb, buf, g0, cap, last, lastd, mtab, ebyte, em.shape[0] > 0)
    span = span_of(work)  # the contexts the version computes: their histories move on
    if span > 18:
        text_done(h, cb, w_before, buf, g0)
    if span > CLAUSES_AT:
        clause_done(h, cb)
    if span > LETTERS_AT:
        line_done(h, cb)
        letter_done(h, cb)
    if span > GROUPS_AT:
        group_done(h, cb)
    if span > FIELDS_AT:
        phrase_done(h, cb, w_before)
    if span > 30:
        word_done(h, cb, wp_before, wpp_before)
    if ind.shape[0] > WORDS_AT and h[WP] != wp_before:  # a word ended
        word_indirect_done(ind, h[WP], wp_before, wpp_before)
    if ltab.shape[0]:
        long_done(h, cb, buf, g0, cap, ltab, lbyte)
