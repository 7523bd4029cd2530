"""The small compiled pieces the model is built from: hashing, adaptive probability slots, the
hashed bucket tables, the logistic mixer and the APM (secondary estimation) stage.

Every value is an integer held inside an explicit range (32-bit hashes are masked after each step,
probabilities stay 12- or 22-bit), so no operation can overflow and nothing depends on float rounding; the mixers'
training step (`mix_train`) runs in 32-bit lanes, exact while every mixer input is within +-2^15 (they are within
+-2^11: stretched probabilities, match lengths, the bias) and the error within +-2^23.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from lmzip.cm.jitcache import UNCOUNTED
from lmzip.cm.tables import RECIP, squash, stretch

M32 = 0xFFFFFFFF

# A slot is one uint32: a 22-bit probability of a 1 in the high bits, then a 6-bit count of updates
# (saturating at 63) and the last 4 bits seen. The count sets the learning rate; (count, history) is
# also the "state" a per-model adaptive map turns into a second, indirect prediction.
# Version 4's slot gives one bit of p to a run flag: 21-bit p, the flag (every bit the slot saw was the
# same), the count, the last 4 bits; its state (what the state map is indexed by) is the low 11 bits.
SLOT_INIT = 1 << 31  # p = 1/2, never seen
P_SHIFT = 10
SM_LIMIT = 255  # a state map's entry (an adaptive p, `adapt`) stops slowing its rate at 1/256.5
SKIP_ERR = 12 * 24  # mixer errors below 12/4096 (at the rate x24 the model uses) are not trained on
# A lookup's candidate buckets (`find_bucket`'s ``ways``: 2, cm version 9 on 4), with SHARED (cm version 12) one
# table for all the hashed models, a context's row chosen by its hash (ROW_SALT makes that independent of its bucket)
SHARED = 8
ROW_SALT = 0x5BD1E995


@njit(cache=True, inline="always")
def hash2(a: int, b: int) -> int:
    """A 32-bit hash of two 32-bit values (odd multipliers below 2^31 keep every product in int64)."""
    x = (((a & M32) * 0x2F0B4A93) & M32) ^ (((b & M32) * 0x6F4F2A65 + 0x3C6EF372) & M32)
    x = ((x ^ (x >> 15)) * 0x2C1B3C6D) & M32
    return x ^ (x >> 13)


@njit(cache=True, inline="always")
def slot_inputs(v: int, sm: np.ndarray, row: int, col: int, smask: int) -> tuple[int, int]:
    """The two mixer inputs of a slot: its own probability and its state's learned one (stretched), the
    state (the slot's low bits, ``smask``) read in column ``col`` of the state map."""
    return stretch(v >> 20), stretch(sm[row, (v & smask) | col] >> 20)


@njit(cache=True, inline="always")
def adapt(v: int, y: int, limit: int) -> int:
    """A probability word (22-bit p << 10 | 10-bit count) moved toward bit y at rate 1/(count+1.5)."""
    p, n = v >> 10, v & 1023
    p += (((y << 22) - p) * RECIP[n]) >> 16
    if n < limit:
        n += 1
    return (p << 10) | n


@njit(cache=True, inline="always")
def slot_update(v: int, y: int, limit: int) -> int:
    """A slot after seeing y: p moves at rate 1/(min(count, limit)+1.5); count and history advance."""
    p, n, h = v >> 10, (v >> 4) & 63, v & 15
    r = n if n < limit else limit
    p += (((y << 22) - p) * RECIP[r]) >> 16
    if n < 63:
        n += 1
    return (p << 10) | (n << 4) | (((h << 1) | y) & 15)


@njit(cache=True, inline="always")
def slot_update_run(v: int, y: int, limit: int) -> int:
    """A version-4 slot after seeing y: as `slot_update`, and its run flag kept while every bit is the same."""
    p, f, n, h = v >> 11, (v >> 10) & 1, (v >> 4) & 63, v & 15
    r = n if n < limit else limit
    p += (((y << 21) - p) * RECIP[r]) >> 16
    f = 1 if n == 0 else (f if (h & 1) == y else 0)
    if n < 63:
        n += 1
    return (p << 11) | (f << 10) | (n << 4) | (((h << 1) | y) & 15)


def _prefetch_codegen(context, builder, signature, args):
    """LLVM's prefetch of the element of ``args[0]`` at the indices that follow it."""
    aryty = signature.args[0]
    ary = context.make_array(aryty)(context, builder, args[0])
    ptr = cgutils.get_item_pointer(context, builder, aryty, ary, list(args[1:]), wraparound=False)
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0")
    builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
    return context.get_dummy_value()


@intrinsic
def prefetch(typingctx, arr, row, index):
    """Ask the CPU to bring ``arr[row, index]``'s cache line in (LLVM's prefetch: a hint, no value, no fault)."""
    return types.void(arr, row, index), _prefetch_codegen


@intrinsic
def prefetch1(typingctx, arr, index):
    """`prefetch` of a one-dimensional ``arr[index]``."""
    return types.void(arr, index), _prefetch_codegen


@njit(cache=True, inline="always")
def bucket_at(t: np.ndarray, k: int, h: int, nb_mask: int, ways: int) -> tuple[int, int]:
    """Where `find_bucket` probes first for hash h of model k: (the row, its first candidate's slot 0); with ``ways``
    & SHARED (cm version 12) the row is chosen by the hash too."""
    if ways & SHARED:
        k = ((hash2(h, ROW_SALT) & 0xFFFF) * t.shape[0]) >> 16
    return k, (h & nb_mask) << 4


@njit(cache=True, inline="always")
def bucket_prefetch(t: np.ndarray, k: int, h: int, nb_mask: int, ways: int) -> None:
    """Start loading the blocks `find_bucket` may probe for hash h of model k (its candidates: `ways`)."""
    r, b0 = bucket_at(t, k, h, nb_mask, ways)
    prefetch(t, r, b0)


@njit(**UNCOUNTED)
def find_bucket(t: np.ndarray, k: int, h: int, nb_mask: int, ways: int) -> int:
    """The 16-slot bucket for hash h in table row k (slot 0 holds a 16-bit check, 1..15 a nibble's
    bit tree). ``ways`` neighbouring candidates (2; cm version 9: 4, one 256-byte block) are probed; on a
    miss the least used one (by its first slot's count; the first of equals) is cleared and claimed. With
    ``ways`` & SHARED (cm version 12) the row is chosen by the hash too: every model's contexts share every row,
    so a busy model takes the room a quiet one leaves. Returns where the bucket's slot 0 is: row << 32 | index."""
    chk = (h >> 16) & 0xFFFF
    k, b0 = bucket_at(t, k, h, nb_mask, ways)
    row = k << 32
    if (np.int64(t[k, b0]) >> 16) == chk:  # as int64: a uint32 against an int64 compared as floats
        return row | b0
    best, least = b0, (t[k, b0 + 1] >> 4) & 63
    for i in range(1, 4 if (ways & 7) == 4 else 2):  # a trip count of 1 or 3 the compiler unrolls: ~8% faster
        b = b0 ^ (i << 4)
        if (np.int64(t[k, b]) >> 16) == chk:
            return row | b
        u = (t[k, b + 1] >> 4) & 63
        if u < least:
            best, least = b, u
    t[k, best] = chk << 16
    for s in range(1, 16):
        t[k, best + s] = SLOT_INIT
    return row | best


@njit(cache=True, inline="always")
def at_row(b: int) -> int:
    """The table row of a bucket `find_bucket` returned (masked: an index the compiler knows is not negative)."""
    return (b >> 32) & 0xFFFF


@njit(cache=True, inline="always")
def at_index(b: int) -> int:
    """The index in its row of a bucket `find_bucket` returned."""
    return b & M32


@njit(cache=True, inline="always")
def mix_dot(w: np.ndarray, ws: int, x: np.ndarray, n: int, lo: int = 0) -> int:
    """The mixer's output in the stretch domain: sum(w * x) / 65536 over inputs lo..n-1 with weight set ws,
    clamped."""
    s = 0
    for i in range(lo, n):
        s += np.int64(w[ws, i]) * x[i]
    s >>= 16
    if s > 2047:
        s = 2047
    if s < -2047:
        s = -2047
    return s


@njit(cache=True, inline="always")
def mix_train(w: np.ndarray, ws: int, x: np.ndarray, n: int, err: int, skip: int, lo: int = 0) -> None:
    """One gradient step on coding cost over inputs lo..n-1: w += (x * err) >> 16, clamped to +-(2^30 - 1) (err
    already scaled by the learning rate). A tiny error (below ``skip``: the mixer was right within ~0.3%) is skipped:
    it would barely move the weights, and on redundant data most bits are like that, so skipping them saves much of
    the time. In 32-bit lanes (eight to an AVX2 register, where 64-bit ones take emulated shifts and clamps): with
    e = eh * 256 + el (0 <= el < 256), (x * e) >> 16 == ((x * eh + ((x * el) >> 8)) >> 8) exactly, floor division
    nesting, and with |x| < 2^15, |err| < 2^23 every step fits in an int32."""
    if -skip < err < skip:
        return
    eh, el = np.int32(err >> 8), np.int32(err & 255)
    for i in range(lo, n):
        xi = x[i]
        a, b = np.int32(xi * eh), np.int32(xi * el)
        v = np.int32(w[ws, i] + np.int32(np.int32(a + (b >> 8)) >> 8))
        w[ws, i] = max(min(v, np.int32(0x3FFFFFFF)), np.int32(-0x3FFFFFFF))


@njit(cache=True, inline="always")
def apm_ask(t: np.ndarray, ctx: int) -> None:
    """Ask for context ``ctx``'s 33 entries (three cache lines) before the mixed p says which two it reads."""
    j = ctx * 33
    prefetch1(t, j)
    prefetch1(t, j + 16)
    prefetch1(t, j + 32)


def apm_init(n_ctx: int) -> np.ndarray:
    """An APM table: per context 33 16-bit probabilities, starting as the identity map."""
    row = np.array([int(squash_py((j - 16) * 128)) * 16 for j in range(33)], dtype=np.int32)
    return np.tile(row, n_ctx).astype(np.int32)


def squash_py(d: int) -> int:
    """squash outside compiled code (table building)."""
    return int(squash(d))


@njit(cache=True, inline="always")
def apm_p_pair(t: np.ndarray, ctx: int, p: int) -> tuple[int, int]:
    """Refine p in context ctx by interpolating between the two nearest of 33 buckets over stretch(p).
    Returns (refined 16-bit p, the lower bucket << 7 | the upper one's weight of 128): both buckets it read."""
    s = stretch(p) + 2048
    lo, w = s >> 7, s & 127
    j = ctx * 33 + lo
    return (t[j] * (128 - w) + t[j + 1] * w) >> 7, (j << 7) | w


@njit(cache=True, inline="always")
def apm_p(t: np.ndarray, ctx: int, p: int) -> tuple[int, int]:
    """As `apm_p_pair`, but what it returns to update is the nearer bucket alone: (refined p, its index)."""
    q, jw = apm_p_pair(t, ctx, p)
    return q, (jw >> 7) + ((jw & 127) >> 6)


@njit(cache=True, inline="always")
def apm_update(t: np.ndarray, j: int, y: int, rate: int) -> None:
    """Move the bucket used toward the bit seen."""
    t[j] += ((y << 16) - y - t[j]) >> rate


@njit(cache=True, inline="always")
def apm_update_pair(t: np.ndarray, jw: int, y: int, rate: int) -> None:
    """Move both buckets `apm_p_pair` read toward the bit seen, each by its share of the interpolation."""
    j, w = jw >> 7, jw & 127
    g = (y << 16) - y
    t[j] += ((g - t[j]) * (128 - w)) >> (rate + 7)
    t[j + 1] += ((g - t[j + 1]) * w) >> (rate + 7)


@njit(cache=True, inline="always")
def clamp_p(p: int) -> int:
    """Keep a 16-bit probability codable: 1..65535."""
    if p < 1:
        return 1
    if p > 65535:
        return 65535
    return p


@njit(cache=True, inline="always")
def sq(d: int) -> int:
    """squash, re-exported for the model loop."""
    return squash(d)


@njit(cache=True, inline="always")
def word_byte(c: int) -> bool:
    """Whether byte ``c`` belongs to a word (a letter, either case, or a byte above 127): what `slide` joins."""
    return (97 <= c <= 122) or (65 <= c <= 90) or c >= 128


@njit(cache=True, inline="always")
def slide(c4: int, c8: int, w0: int, wp: int, c: int) -> tuple[int, int, int, int]:
    """Byte ``c`` done: the last eight bytes (c4 the latest four, c8 the four before) and the word hashes
    (the current word, the previous one; a 3/4-byte UTF-8 character, CJK, is a word of its own)."""
    c8 = ((c8 << 8) | (c4 >> 24)) & 0xFFFFFFFF
    c4 = ((c4 << 8) | c) & 0xFFFFFFFF
    lc = c + 32 if 65 <= c <= 90 else c
    if c >= 0xE0:
        wp, w0 = w0, hash2(0, lc)
    elif word_byte(c):
        w0 = hash2(w0, lc)
    elif w0 != 0:
        wp, w0 = w0, 0
    return c4, c8, w0, wp


@njit(cache=True, inline="always")
def row_length(d: int, seen: int, d_before: int, cand: int, cand_n: int, rlen: int) -> tuple[int, int, int]:
    """The record model's row length: byte distance ``d`` since this byte value was last ``seen`` (its
    position + 1), equal to the distance before (``d_before``), proposed as ``cand`` and adopted as
    ``rlen`` once it repeats again; (cand, cand_n, rlen)."""
    if seen > 0 and d == d_before and 2 <= d < 65536:
        if d == cand:
            cand_n += 1
            if cand_n >= 2:
                rlen = d
        else:
            cand, cand_n = d, 0
    return cand, cand_n, rlen
