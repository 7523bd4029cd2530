"""The per-byte and per-bit machinery that counting's loop (`model`) and the mixed loop (`mix`) share:
the contexts of the next byte, the models' inputs, their updates and the match model. A context model
is written here once and both loops get it; each loop keeps only its mixers, its APM stages and the
way it walks its input.

A history is one int64 row (the fields below): the last eight bytes, the word hashes, the match, the
text lines, the record length and how many bytes the history has seen. Its bytes live in a buffer at
g0 … g0 + FILL; a loop over one stream has one history at g0 = 0, the mixed loop one per segment, each
``cap`` bytes apart in one buffer (a match may point into any segment, once that segment has coded it).

Models (each with a slot per context and a state map, `state_at`; hashed ones have a row in `ht`, model m row m - 2,
in version 12 any row):
  0 order-0 (direct)          1 order-1 (direct)        2..6 orders 2, 3, 4, 5, 8 (hashed)
  7 word (current word)       8 word + previous word    9 sparse: bytes 2-3 back
 10 sparse: bytes 4 and 8 back
 11 record: the byte one row up + the previous byte    12 record: the three bytes above + two rows up
 13 text column: column in the line + the byte above it in the previous line + the previous byte
 14 (version 2) word + the two words before it (a CJK character is a word: order 2 over characters)
 15, 16 (version 3) indirect: the previous byte + the two bytes that followed its last two sightings; the
   last two bytes + the two that followed them last (lmzip.cm.model keeps those histories, `IND_BYTES`)
 17 (version 4) word + the word two before it (skipping one)
 18, 19 (version 4) line: the line's first four bytes + the current word; + the column + the previous byte
 + (version 2) the bilevel-image model: five direct contexts of single pixels (bits) from this row and
   the rows above, once a record length of 8 bytes or more is found in bytes that are mostly not text (a
   fax page, a 1-bit bitmap), one input each
 + (version 3) the run model: per hashed model of orders 2-8 and the two word models, the byte its context
   saw last and how many times in a row (kept in the bucket's check slot), one input each: the learned p
   of the bit that byte predicts, while the bits so far agree with it
 + the match model (two inputs) + a bias
 + (version 4) the expected-byte model: the byte the match expects x the previous byte x the match's length
   bucket x the bit position, one direct table, one input; and three changes to what is there: a slot keeps a
   run flag (every bit it saw was the same) in its state, the state maps of models 0-6 (the orders) are kept
   per partial byte instead of per bit position, and a match that misses is kept, one byte on, as a match
   of length 1 (the lookup replaces it when it finds a verified one)
 20, 21 (version 5) text: the word + the gap of bytes before it (in a gap: the gap + the word before it); the
   keyword (the last word before ':' or '=') + the word or gap
 22, 23 (version 5) text: the last five letters and digits, whatever lies between (UTF-16 text: its zero
   bytes); the classes of the last six bytes (digit, lower, upper, UTF-8 role, or the byte) + the previous byte
 24-27 (version 5) an open bracket or quote + the word or gap; the types of the last eight bytes + the
   previous byte; the word's length + the types of the last four bytes; the byte above + how many bytes in a
   row agreed with the line above + the previous byte
 28-31 (version 7) columns: the column in the line + whether the previous byte is a space; + the previous byte;
   + the line's first byte and the previous byte's class; + the previous line's length (``column_contexts``)
 + (version 5) the long match model: the last LONG bytes hashed, a match held while it agrees, two inputs (its
   learned p by length x whether the match model expects the same bit x the bit; its length, signed); and the
   image model's six more contexts (wider, taller: ``wide_image_contexts``)
 + (version 8) the image model's five more contexts (``tall_image_contexts``), its own row length and gate, and
   the weight sets and APM context it picks (lmzip.cm.image)
 32-39 (version 10) words: the word or gap + the three words before; + the second and third back; + the line's
   first word; + the previous word's stem (its first five letters); + the two before's stems; + the word before,
   the gap before it and the one before that; + the previous stem and the second word back; + the 1 KiB block it
   is in (``word_contexts``)
 40, 41 (version 10) token-indirect: the two bytes that followed the current token (a word or a gap) last + the
   word's length; the one byte + the last two bytes (lmzip.cm.run)
 + (version 10) a third input per model: its state map's input again where its slot never wavered (``sure_input``)
 42, 43 (version 11) word-indirect: the word that followed the previous word last + the current word or gap; the word
   that followed the two previous words last + the same (lmzip.cm.run)
 44-47 (version 12) sparse: bytes 1 and 3 back; bytes 2 and 4 back; the high nibbles of the last four bytes; bytes 1
   and 4 back (``sparse_contexts``); and the hashed models share one table, each context's row chosen by its hash
   (lmzip.cm.parts.find_bucket)
 48 (version 17) number: in a gap, its shape (every digit one digit) + the keyword; in a word, the word + the shape
   of the gap before it (``number_context``)
 49, 50 (version 18) orders 6 and 12 (lmzip.cm.orders)
 51-54 (version 19) clauses: the text since an open bracket or the last punctuation; the open bracket + the last
   bytes' types; the mark + the words since it; the clause's first word + the word or gap (lmzip.cm.clauses)
 55-57 (version 20) the key of the last line with a ':' + this line so far; the word's vowels and consonants, its
   capitals (lmzip.cm.letters)
 58-61 (version 24) character groups: the line's shape, a run of digits or letters one group (lmzip.cm.groups)
 62-66 (version 25) fields and phrases: the line key + the word or gap + the word before; + the two before; the line's
   first word + the previous byte; the word + the words before it in its phrase; where the line starts + the previous
   byte (lmzip.cm.fields)
 (version 26) version 25's models less nine: models 20, 25, 26, 36-38, 45, 57, 63 (version 25's rows 18, 23, 24,
   34-36, 43, 55, 61: lmzip.cm.sizes.DROPPED); their contexts are computed as before, `pick` leaves them out of the
   rows a version 26 table looks up (``KEEP``; its model k + 2 is row k)
 (version 27) version 26's models; where the image model is on and most recent bytes are blank (0 or 255), the
   words, indirect, clause, character-group and field models' inputs are 0 (lmzip.cm.model.ON_IMAGES), and a weight
   set no bit has chosen starts as a copy of the match/orders state's (lmzip.cm.loop.fresh_rows)
The version (lmzip.cm.format.VERSIONS) fixes which models run: the arrays a loop is given have their
rows (``ht``, ``sm``, the mixers' inputs, the image tables: lmzip.cm.sizes), so the compiled helpers read it from
the shapes and every earlier version decodes through the same code.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.clauses import AT as CLAUSES_AT
from lmzip.cm.clauses import clause_contexts, line_context
from lmzip.cm.fields import AT as FIELDS_AT
from lmzip.cm.fields import field_contexts
from lmzip.cm.groups import AT as GROUPS_AT
from lmzip.cm.groups import group_contexts
from lmzip.cm.history import (
    C4,
    C8,
    CAND,
    CANDN,
    FILL,
    LINE,
    MLEN,
    MPTR,
    PLINE,
    RLEN,
    W0,
    WP,
    WPP,
)
from lmzip.cm.letters import AT as LETTERS_AT
from lmzip.cm.letters import letter_contexts
from lmzip.cm.match import MINLEN
from lmzip.cm.orders import AT as ORDERS_AT
from lmzip.cm.orders import order_contexts
from lmzip.cm.parts import (
    SM_LIMIT,
    adapt,
    at_index,
    at_row,
    bucket_prefetch,
    find_bucket,
    hash2,
    prefetch,
    row_length,
    slide,
    slot_inputs,
    slot_update,
    slot_update_run,
)
from lmzip.cm.sizes import BY_BYTE, KEEP, SM_WIDE
from lmzip.cm.sparse import sparse_contexts
from lmzip.cm.text import column_contexts, line_contexts, number_context, text_contexts, word_contexts

SLOT_LIMIT = 63        # a slot's rate stops falling at 1/64.5: adapts to drift, still averages
KEEP_ROWS = np.array(KEEP, dtype=np.int64)  # lmzip.cm.sizes.KEEP as the compiled code reads it


@njit(cache=True, inline="always")
def pick(full, ctx):
    """Version 26: the contexts of its rows (KEEP) from all that `contexts` computed into ``full``; before it
    ``full`` is ``ctx``."""
    if full.shape[0] != ctx.shape[0]:
        for k in range(ctx.shape[0]):
            ctx[k] = full[KEEP_ROWS[k]]


@njit(cache=True, inline="always")
def sure_input(x, at, m, v):
    """Version 10 (``at`` >= 0): model ``m``'s state-map input again at x[at + m] where its slot ``v`` has seen one
    bit value alone (its run flag), else 0: the mixers weigh a context that never wavered apart from one that did."""
    if at >= 0:
        x[at + m] = x[2 * m + 1] if (v >> 4) & 127 > 64 else 0


@njit(cache=True, inline="always")
def contexts(ctx, h, buf, g0):
    """The hashed models' contexts of the byte after history ``h`` (its bytes at buf[g0:])."""
    c4, c8, w0, wp, k, rlen = h[C4], h[C8], h[W0], h[WP], h[FILL], h[RLEN]
    c1 = c4 & 0xFF
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
        ctx[10] = hash2(up | (np.int64(buf[g0 + k - rlen + 1]) << 8) | (np.int64(buf[g0 + k - rlen - 1]) << 16)
                        | (up2 << 24), 12)
    else:
        ctx[9] = hash2(c1, 11)
        ctx[10] = 12
    line, pline = h[LINE], h[PLINE]
    col = k - line
    above = np.int64(buf[g0 + pline + col]) if pline + col < line else 0
    ctx[11] = hash2(min(col, 255) | (above << 8) | (c1 << 16), 13)
    if ctx.shape[0] > 12:
        ctx[12] = hash2(hash2(w0, h[WPP]), wp + 14)
    if ctx.shape[0] > 15:
        line_contexts(ctx, h, buf, g0, col, c1)
    if ctx.shape[0] > 18:
        text_contexts(ctx, h, c1, above)
    if ctx.shape[0] > 26:
        column_contexts(ctx, h, buf, g0, col, c1)
    if ctx.shape[0] > 30:
        word_contexts(ctx, h)
    if ctx.shape[0] > 42:
        sparse_contexts(ctx, c4)
    if ctx.shape[0] > 46:
        number_context(ctx, h)
    if ctx.shape[0] > ORDERS_AT:
        order_contexts(ctx, c4, c8, buf, g0 + k, k)
    if ctx.shape[0] > CLAUSES_AT:
        clause_contexts(ctx, h)
    if ctx.shape[0] > LETTERS_AT:
        line_context(ctx, h)
        letter_contexts(ctx, h)
    if ctx.shape[0] > GROUPS_AT:
        group_contexts(ctx, h)
    if ctx.shape[0] > FIELDS_AT:
        field_contexts(ctx, h)


@njit(cache=True, inline="always")
def buckets(ht, base, ctx, c0, nb_mask, ways):
    """Each hashed model's bucket for the nibble that starts at partial byte ``c0`` (among ``ways`` candidates)."""
    bucket_ask(ht, base, ctx, c0, nb_mask, ways)
    bucket_find(ht, base, nb_mask, ways)


@njit(cache=True, inline="always")
def bucket_ask(ht, base, ctx, c0, nb_mask, ways):
    """`buckets`' first half: each hashed model's hash for the nibble at partial byte ``c0`` into ``base``, its
    block asked into the cache (a loop can ask early, while other work hides the wait)."""
    for k in range(ctx.shape[0]):
        base[k] = hash2(ctx[k], c0)
        bucket_prefetch(ht, k, base[k], nb_mask, ways)


@njit(cache=True, inline="always")
def bucket_find(ht, base, nb_mask, ways):
    """`buckets`' second half: each hash in ``base`` replaced by its bucket (`find_bucket`)."""
    for k in range(base.shape[0]):
        base[k] = find_bucket(ht, k, base[k], nb_mask, ways)


@njit(cache=True, inline="always")
def state_ask(ht, sm, base, j, c0):
    """The state-map entries of each hashed model's first slot of the nibble starting at bit ``j`` (16-18 MiB of maps
    from version 4 on: most are not in the cache), asked for as soon as the buckets are found."""
    if sm.shape[1] == SM_WIDE:
        for k in range(base.shape[0]):
            row, col = state_at(True, 2 + k, j, c0)
            prefetch(sm, row, (np.int64(ht[at_row(base[k]), at_index(base[k]) + 1]) & 2047) | col)


@njit(cache=True, inline="always")
def state_at(wide, m, j, c0):
    """Where model ``m``'s state map is read for bit ``j`` of partial byte ``c0``: (row, column). Before
    version 4, row m by bit position; version 4's ``wide`` maps keep the orders a row each by partial byte,
    the other models side by side by bit position from row BY_BYTE on, 32 a row."""
    if not wide:
        return m, j << 10
    if m < BY_BYTE:
        return m, c0 << 11
    q = ((m - BY_BYTE) << 3) | j
    return BY_BYTE + (q >> 8), (q & 255) << 11


@njit(cache=True, inline="always")
def inputs(x, t01, ht, sm, base, nib, c0, c1, j, sure):
    """Every counting model's two inputs for bit ``j`` (and from version 10 a third at x[sure:], `sure_input`; -1:
    none); returns how many of orders 2-6 know it."""
    wide = sm.shape[1] == SM_WIDE
    smask = 2047 if wide else 1023
    r, col = state_at(wide, 0, j, c0)
    v = np.int64(t01[0, c0])
    x[0], x[1] = slot_inputs(v, sm, r, col, smask)
    sure_input(x, sure, 0, v)
    r, col = state_at(wide, 1, j, c0)
    v = np.int64(t01[1, (c1 << 8) | c0])
    x[2], x[3] = slot_inputs(v, sm, r, col, smask)
    sure_input(x, sure, 1, v)
    known = 0
    for k in range(ht.shape[0]):
        v = np.int64(ht[at_row(base[k]), at_index(base[k]) + nib])
        r, col = state_at(wide, 2 + k, j, c0)
        x[4 + 2 * k], x[5 + 2 * k] = slot_inputs(v, sm, r, col, smask)
        sure_input(x, sure, 2 + k, v)
        if k < 5 and (v & 1008) != 0:
            known += 1
    return known


@njit(cache=True, inline="always")
def slot_learn(t, r, s, sm, m, wide, j, c0, y):
    """Slot ``t[r, s]`` of model ``m`` and its state's entry in the state maps after bit ``y``."""
    v = np.int64(t[r, s])
    row, col = state_at(wide, m, j, c0)
    q = (v & (2047 if wide else 1023)) | col
    sm[row, q] = adapt(np.int64(sm[row, q]), y, SM_LIMIT)
    t[r, s] = slot_update_run(v, y, SLOT_LIMIT) if wide else slot_update(v, y, SLOT_LIMIT)


@njit(cache=True, inline="always")
def learn(t01, ht, sm, base, nib, c0, c1, j, y):
    """Every counting model's slot and state map after bit ``y`` (bit ``j`` of partial byte ``c0``); from version 4
    (16-18 MiB of maps) the entries the next bit of the nibble will read are asked for (`prefetch`: the same bytes)."""
    wide = sm.shape[1] == SM_WIDE
    slot_learn(t01, 0, c0, sm, 0, wide, j, c0, y)
    slot_learn(t01, 1, (c1 << 8) | c0, sm, 1, wide, j, c0, y)
    ahead = wide and j != 3 and j != 7  # the next bit's slots are in this bucket: their state-map entries asked early
    c0n, nibn = (c0 << 1) | y, (nib << 1) | y
    for k in range(ht.shape[0]):
        r, s = at_row(base[k]), at_index(base[k])
        slot_learn(ht, r, s + nib, sm, 2 + k, wide, j, c0, y)
        if ahead:
            row, col = state_at(wide, 2 + k, j + 1, c0n)
            prefetch(sm, row, (np.int64(ht[r, s + nibn]) & 2047) | col)


@njit(cache=True, inline="always")
def byte_done(h, c, buf, g0, cap, last, lastd, mtab, ebyte, keep):
    """History ``h`` after byte ``c``: its buffer, contexts, lines, record length and match (extended, or
    looked up: the last 8 bytes first, a longer and likelier match, then the last MINLEN; a candidate
    counts only if the bytes before it really agree, within what both segments hold; with ``keep``,
    version 4, a match that missed and finds no other goes on one byte later, as a match of length 1)."""
    k = h[FILL]
    buf[g0 + k] = c
    wp = h[WP]
    h[C4], h[C8], h[W0], h[WP] = slide(h[C4], h[C8], h[W0], h[WP], c)
    if h[WP] != wp:
        h[WPP] = wp
    if c == 10:
        h[PLINE], h[LINE] = h[LINE], k + 1
    d = k + 1 - last[c]
    # NB: CAND is both the record model's candidate row length and, below, the match table's lookup,
    # which overwrites it whenever no match is held. The files this format writes depend on that
    # sharing (it helps tables: kennedy.xls, ptt5), so it stays; a change would be a new cm version.
    cand, cand_n, h[RLEN] = row_length(d, last[c], lastd[c], h[CAND], h[CANDN], h[RLEN])
    lastd[c] = d
    last[c] = k + 1
    mlen, mptr = h[MLEN], h[MPTR]
    kept = 0
    if mlen > 0 and ebyte == c:
        mlen, mptr = min(mlen + 1, 65535), mptr + 1
    else:
        if keep and mlen > 0:
            kept = mptr + 1
        mlen = 0
    gi = g0 + k
    if k + 1 >= MINLEN:
        c4, c8, m_mask = h[C4], h[C8], mtab.shape[0] - 1
        hs = hash2(c4, c8 & 0xFFFF) & (m_mask >> 1)
        hl = (hash2(c4, c8) & (m_mask >> 1)) | ((m_mask >> 1) + 1)
        if mlen == 0:
            for e in (hl, hs):
                cand = mtab[e]
                if cand > 0 and mlen == 0:
                    room = min(cand - (cand - 1) // cap * cap, k + 1)  # bytes both sides have in their segments
                    ln = 0
                    while ln < 32 and ln < room and buf[cand - 1 - ln] == buf[gi - ln]:
                        ln += 1
                    if ln >= MINLEN:
                        mlen, mptr = ln, cand
        if mlen == 0 and kept > 0:
            mlen, mptr = 1, kept
        mtab[hs] = gi + 1
        if k + 1 >= 8:
            mtab[hl] = gi + 1
    h[MLEN], h[MPTR], h[CAND], h[CANDN], h[FILL] = mlen, mptr, cand, cand_n, k + 1
