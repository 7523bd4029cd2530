"""Counting's mixing stages: the first-layer mixers (each with the weight set its context chose), the final mixer
over them, their learning rates, and the three APM stages that refine the mixed probability. `model` calls
them once per bit; every version's rates and APM updates are chosen here by the flags the loop passes."""

from __future__ import annotations

from numba import njit

from lmzip.cm.parts import (
    SKIP_ERR,
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
def final_sets(fin, s2, c0, c4):
    """The final mixer's weight sets for this bit, into fin[4:]: by the match/orders state (or the image model's)
    ``s2``; version 13 also by the partial byte, version 14 by the previous byte and by the one before it too."""
    fin[4], fin[5] = s2, FINAL_SETS + c0
    fin[6], fin[7] = 2 * FINAL_SETS + (c4 & 0xFF), 3 * FINAL_SETS + ((c4 >> 8) & 0xFF)


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
    n_fin = wf.shape[0] // FINAL_SETS
    d = 0
    for k in range(n_fin):
        fin[k] = mix_dot(wf, fin[4 + k], xf, n + 1)
        d += fin[k]
    return d >> (n_fin >> 1)


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
    for k in range(wf.shape[0] // FINAL_SETS):
        mix_train(wf, fin[4 + k], xf, n + 1, ((y << 12) - sq(fin[k])) * lr2, skip)


@njit(cache=True, inline="always")
def refine(apms, aj, p, c4, c0, mi, pair, ik):
    """The mixed ``p`` refined by the three APM stages (order 1, order 2, match state) and averaged with
    them, 16 bits (near-certain bits cost ~0); ``aj``: the entries each stage will update (``pair``, version 6:
    both buckets each stage read, not the nearer; ``ik`` >= 0, version 8's image model: the order-2 stage's
    context instead of the last two bytes)."""
    apm1, apm2, apm3 = apms
    k1 = ((c4 & 0xFF) << 8) | c0
    k2 = hash2(c4 & 0xFFFF, c0) if ik < 0 else ik
    k2 &= (1 << APM2_BITS) - 1
    k3 = (mi + 1) * 256 + c0
    if pair:
        a1, aj[0] = apm_p_pair(apm1, k1, p)
        a2, aj[1] = apm_p_pair(apm2, k2, p)
        a3, aj[2] = apm_p_pair(apm3, k3, p)
    else:
        a1, aj[0] = apm_p(apm1, k1, p)
        a2, aj[1] = apm_p(apm2, k2, p)
        a3, aj[2] = apm_p(apm3, k3, p)
    return clamp_p((16 * p + a1 + a2 + a3 + 2) >> 2)


@njit(cache=True, inline="always")
def refine_learn(apms, aj, y, pair):
    """The three APM stages of ``refine`` after bit ``y``."""
    for k in range(3):
        if pair:
            apm_update_pair(apms[k], aj[k], y, APM_RATE_PAIR)
        else:
            apm_update(apms[k], aj[k], y, APM_RATE)
