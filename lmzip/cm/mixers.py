"""Counting's mixing stages: the first-layer mixers (each with the weight set its context chose), the final mixer
over them, their learning rates, and the three APM stages that refine the mixed probability. `model` calls
them once per bit; every version's rates and APM updates are chosen here by the flags the loop passes."""

from __future__ import annotations

from numba import njit

from lmzip.cm.parts import (
    SKIP_ERR,
    apm_ask,
    apm_p,
    apm_p_pair,
    apm_update,
    apm_update_pair,
    clamp_p,
    hash2,
    mix_dot,
    mix_train,
    sq,
)

APM2_BITS = 14
FINAL_SETS = 256  # the final mixer's weight sets by match/orders state (or the image model's); versions 13, 14
# add as many by other contexts (`final_sets`)
MISS_SETS = 8  # version 16: the first of them by the misses too (`misses`: 3 flags), 8 x FINAL_SETS rows
MISS_APM = 256 * 8 * 8  # version 16's misses APM stage: the partial byte x the misses x the last byte's type
APM3_CTX = 65 * 256  # the match-state APM stage's contexts (version 16's misses stage follows them in its table)
ORDERS_END = 14  # the orders' inputs (models 0-6, two each) come first; version 13's last group mixer weighs them
MIX_LR1, MIX_LR2 = 24, 16  # the mixers' rates: the first layer (at the start: it falls by half), the final mixer
MIX_LR1_6, MIX_LR2_6 = 16, 10  # version 6's: the first layer's falls from 24 to 8, sooner (first_rate)
MIX_LR1_11 = 12  # version 11's: from 18 to 6 (its 161 inputs learn best slower: -0.13% over the sample)
APM_RATE = 6
APM_RATE_PAIR = 5  # version 6's: an update shared by two buckets moves each by its share
SKIP_ERR_6 = 12 * 16  # version 6's mixer errors not trained on (SKIP_ERR's 12/4096, at its lower rates)


@njit(cache=True, inline="always")
def first_rate(i, six, slow):
    """The first layer's rate at byte ``i``: fast at first, then settling: x24 at the start, x18 at 256 KiB, x14
    at 1 MiB; version 6 (``six``) sooner and lower: x24, x16 at 64 KiB, x11 at 256 KiB, x9 at 1 MiB; version 11
    (``slow``) x18, x12, x8, x7."""
    if six:
        r = MIX_LR1_11 if slow else MIX_LR1_6
        return r // 2 + (r << 16) // ((1 << 16) + i)
    return MIX_LR1 // 2 + ((MIX_LR1 // 2) << 18) // ((1 << 18) + i)


@njit(cache=True, inline="always")
def slower(ht):
    """Whether the first layer learns at version 11's slower rate (``first_rate``'s ``slow``): its 42 hashed tables."""
    return ht.shape[0] > 40


@njit(cache=True, inline="always")
def final_rate(six):
    """The final mixer's rate (version 6: ``six``)."""
    return MIX_LR2_6 if six else MIX_LR2


@njit(cache=True, inline="always")
def group_dot(w1, ws, x, k, groups):
    """First-layer mixer k's output: over every input, or for version 13's group mixers (``groups``: the first one's
    index and the end of the models' inputs, `lmzip.cm.loop.group_bounds`) over their group's."""
    if k == groups[0]:
        return mix_dot(w1, ws, x, groups[1], ORDERS_END)
    if k == groups[0] + 1:
        return mix_dot(w1, ws, x, ORDERS_END)
    return mix_dot(w1, ws, x, x.shape[0])


@njit(cache=True, inline="always")
def misses(fin):
    """Version 16: how the last bits were mispredicted, from the register in fin[8] (a bit per coded bit, 1 where
    the coded p leaned the other way): the last bit, any of the seven before, any of the eight before those."""
    m = fin[8]
    return (m & 1) | (((m & 0xFE) != 0) << 1) | (((m & 0xFF00) != 0) << 2)


@njit(cache=True, inline="always")
def miss_sets(wf):
    """Whether the final mixer's first weight set is chosen by the misses too (version 16: its MISS_SETS x rows)."""
    return wf.shape[0] > 4 * FINAL_SETS


@njit(cache=True, inline="always")
def miss_stage(apm3):
    """Whether `refine` has version 16's misses stage (its contexts after the match-state stage's, in one table)."""
    return apm3.shape[0] > APM3_CTX * 33


@njit(cache=True, inline="always")
def n_fin(wf):
    """How many final weight sets are averaged: one per FINAL_SETS rows of ``wf`` (version 16's first: MISS_SETS)."""
    n = wf.shape[0] // FINAL_SETS
    return n - MISS_SETS + 1 if miss_sets(wf) else n


@njit(cache=True, inline="always")
def final_sets(fin, s2, c0, c4, m3, wide):
    """The final mixer's weight sets for this bit, into fin[4:]: by the match/orders state (or the image model's)
    ``s2``, version 16 (``wide``) x the misses ``m3``; version 13 also by the partial byte, version 14 by the
    previous byte and by the one before it too."""
    base = FINAL_SETS * MISS_SETS if wide else FINAL_SETS
    fin[4], fin[5] = s2 | (m3 << 8), base + c0
    fin[6], fin[7] = base + FINAL_SETS + (c4 & 0xFF), base + 2 * FINAL_SETS + ((c4 >> 8) & 0xFF)


@njit(cache=True, inline="always")
def mix(w1, wf, x, xf, sel, groups, fin):
    """The first-layer mixers' outputs into xf (mixer k with weight set sel[k], over its inputs: `group_dot`), then
    the final mixer's, in the stretch domain: with each of its weight sets (``wf`` holds FINAL_SETS rows per set:
    one, version 13 two, version 14 four; `final_sets` chose them in fin[4:]), each output kept in fin[:4] for
    `mix_learn`, their average."""
    n = xf.shape[0] - 1
    for k in range(n):
        xf[k] = group_dot(w1, sel[k], x, k, groups)
    xf[n] = 256
    nf = n_fin(wf)
    d = 0
    for k in range(nf):
        fin[k] = mix_dot(wf, fin[4 + k], xf, n + 1)
        d += fin[k]
    return d >> (nf >> 1)


@njit(cache=True, inline="always")
def mix_learn(w1, wf, x, xf, sel, y, lr1, lr2, wn, six, groups, fin):
    """Every mixer after bit ``y``: the first layer at rate ``lr1`` (version 5: faster while a weight set is
    young, ``wn`` counting each set's uses: x(1 + 24/(uses + 16)), version 6 x(1 + 96/(uses + 32))), the final
    mixer at ``lr2``; version 6 skips fewer small errors (``six``); each first-layer mixer learns over its own
    inputs (``groups``, as `group_dot`); each final weight set on its own output's error (``fin``, `mix`)."""
    n = xf.shape[0] - 1
    young, half, skip = (96, 32, SKIP_ERR_6) if six else (24, 16, SKIP_ERR)
    for k in range(n):
        r = lr1
        if wn.shape[0]:
            u = wn[sel[k]]
            r += (lr1 * young) // (u + half)
            if u < 65535:
                wn[sel[k]] = u + 1
        err = ((y << 12) - sq(xf[k])) * r
        if k == groups[0]:
            mix_train(w1, sel[k], x, groups[1], err, skip, ORDERS_END)
        elif k == groups[0] + 1:
            mix_train(w1, sel[k], x, ORDERS_END, err, skip)
        else:
            mix_train(w1, sel[k], x, x.shape[0], err, skip)
    for k in range(n_fin(wf)):
        mix_train(wf, fin[4 + k], xf, n + 1, ((y << 12) - sq(fin[k])) * lr2, skip)


@njit(cache=True, inline="always")
def refine_contexts(c4, c0):
    """The order-1 and order-2 stages' contexts at partial byte ``c0`` after the bytes ``c4``."""
    return ((c4 & 0xFF) << 8) | c0, hash2(c4 & 0xFFFF, c0) & ((1 << APM2_BITS) - 1)


@njit(cache=True, inline="always")
def refine_ask(apm1, apm2, c4, c0):
    """The order-1 and order-2 stages' entries `refine` will read at partial byte ``c0``, asked for while the models'
    inputs are read (the image model's order-2 context is not known yet: the bytes' is asked)."""
    k1, k2 = refine_contexts(c4, c0)
    apm_ask(apm1, k1)
    apm_ask(apm2, k2)


@njit(cache=True, inline="always")
def refine(apms, aj, p, c4, c0, mi, pair, ik, fin, t1):
    """The mixed ``p`` refined by the three APM stages (order 1, order 2, match state) and averaged with
    them, 16 bits (near-certain bits cost ~0); ``aj``: the entries each stage will update (``pair``, version 6:
    both buckets each stage read, not the nearer; ``ik`` >= 0, version 8's image model: the order-2 stage's
    context instead of the last two bytes). Version 16 (the match-state stage's table longer): a fourth stage, by
    the partial byte x the `misses` (in ``fin``) x the last byte's type ``t1``, a quarter of the result; the result
    kept in fin[9] (`refine_learn` turns it into the next miss)."""
    apm1, apm2, apm3 = apms
    k1, k2 = refine_contexts(c4, c0)
    if ik >= 0:
        k2 = ik & ((1 << APM2_BITS) - 1)
    k3 = (mi + 1) * 256 + c0
    if pair:
        a1, aj[0] = apm_p_pair(apm1, k1, p)
        a2, aj[1] = apm_p_pair(apm2, k2, p)
        a3, aj[2] = apm_p_pair(apm3, k3, p)
    else:
        a1, aj[0] = apm_p(apm1, k1, p)
        a2, aj[1] = apm_p(apm2, k2, p)
        a3, aj[2] = apm_p(apm3, k3, p)
    q = clamp_p((16 * p + a1 + a2 + a3 + 2) >> 2)
    if miss_stage(apm3):
        a4, aj[3] = apm_p_pair(apm3, APM3_CTX + ((((c0 << 3) | misses(fin)) << 3) | t1), p)
        q = clamp_p((3 * q + a4 + 2) >> 2)
    fin[9] = q
    return q


@njit(cache=True, inline="always")
def refine_learn(apms, aj, y, pair, fin):
    """The APM stages of ``refine`` after bit ``y``, and the misses register in fin[8] (`misses`)."""
    for k in range(3):
        if pair:
            apm_update_pair(apms[k], aj[k], y, APM_RATE_PAIR)
        else:
            apm_update(apms[k], aj[k], y, APM_RATE)
    if miss_stage(apms[2]):
        apm_update_pair(apms[2], aj[3], y, APM_RATE_PAIR)
    fin[8] = ((fin[8] << 1) | ((fin[9] >> 15) ^ y)) & 0xFFFF
