"""What a cm version's tables hold: its hashed models' rows, the state maps' shape, the mixers' inputs (the
version fixes the arrays, and the compiled loops read every size from their shapes: lmzip.cm.body)."""

from __future__ import annotations

from lmzip.cm.clauses import AT as CLAUSES_AT
from lmzip.cm.clauses import N_CLAUSES
from lmzip.cm.fields import AT as FIELDS_AT
from lmzip.cm.fields import N_FIELDS
from lmzip.cm.format import CLAUSES, FEWER, FIELDS, GROUPS, LETTERS, ORDERS, SHAPES
from lmzip.cm.groups import AT as GROUPS_AT
from lmzip.cm.groups import N_GROUPS
from lmzip.cm.image import N_IMAGE, N_IMAGE5, N_IMAGE8
from lmzip.cm.letters import AT as LETTERS_AT
from lmzip.cm.letters import N_LETTERS
from lmzip.cm.orders import AT as ORDERS_AT
from lmzip.cm.parts import SHARED
from lmzip.cm.run import N_RUN

SM_COLUMNS = 8 << 10   # a state map's entries before version 4: 10-bit states x the bit position
BY_BYTE = 7            # version 4: models 0..BY_BYTE-1 (the orders) read their state maps by partial byte
SM_WIDE = 256 << 11    # version 4's rows: 11-bit states x the partial byte; the other models share one more row
FULL = FIELDS_AT + N_FIELDS  # version 25's hashed models: every context lmzip.cm.body computes
# Version 26 (FEWER) looks up the contexts of version 25's rows but these (benchmarks/silence.py at level 9 on the
# kinds set: none adds more than 0.02% to any of its ten files, most make them smaller; each costs ~1/65 of the time):
# the word + the gap before it; the last eight bytes' types + the byte; the word's length + the last four's types; the
# stems of the two words before, the word before + the gaps, the previous stem + the second word back; bytes 2 and 4
# back; the word's capitals; the line key + the word + the two before. Its rows are the others, in order.
DROPPED = (18, 23, 24, 34, 35, 36, 43, 55, 61)
KEEP = tuple(k for k in range(FULL) if k not in DROPPED)


def n_hashed(version: int) -> int:
    """Rows of ``ht``: the hashed models of a cm version."""
    if version >= FEWER:
        return len(KEEP)  # version 25's but DROPPED
    if version >= FIELDS:
        return FULL  # the field and phrase contexts (lmzip.cm.fields)
    if version >= GROUPS:
        return GROUPS_AT + N_GROUPS  # the character groups (lmzip.cm.groups)
    if version >= LETTERS:
        return LETTERS_AT + N_LETTERS  # the line key and the letters (lmzip.cm.letters)
    if version >= CLAUSES:
        return CLAUSES_AT + N_CLAUSES  # the clauses (lmzip.cm.clauses)
    if version >= ORDERS:
        return ORDERS_AT + 2  # orders 6 and 12 (lmzip.cm.orders)
    if version >= SHAPES:
        return 47  # the number model (lmzip.cm.text.number_context)
    return {1: 12, 2: 13, 3: 15, 4: 18, 5: 26, 6: 26, 10: 40, 11: 42}.get(version, 30 if version < 10 else 46)


def n_contexts(version: int) -> int:
    """The contexts the per-byte machinery computes (lmzip.cm.body.contexts): a version's hashed models, version 26
    version 25's (it looks up KEEP's alone)."""
    return FULL if version >= FEWER else n_hashed(version)


def n_ways(version: int) -> int:
    """The candidate buckets a context's nibble is looked up in (version 9: four; version 12: in a table the hashed
    models share, `find_bucket`)."""
    return 2 if version < 9 else 4 if version < 12 else 4 | SHARED


def n_ebyte(version: int) -> int:
    """The expected-byte model's inputs (version 4)."""
    return 1 if version >= 4 else 0


def n_long(version: int) -> int:
    """The long match model's inputs (version 5)."""
    return 2 if version >= 5 else 0


def n_models(version: int) -> int:
    """Every model with a slot and a state map (orders 0 and 1 are direct, the others hashed)."""
    return n_hashed(version) + 2


def sm_shape(version: int) -> tuple[int, int]:
    """The state maps' shape: a row per model, or in version 4 a wide row per order and, for the others, as many
    rows as they fill by bit position (32 models a row: one row to version 9, two from version 10)."""
    if version < 4:
        return n_models(version), SM_COLUMNS
    return BY_BYTE + 1 + ((n_models(version) - BY_BYTE) * 8 - 1) // 256, SM_WIDE


def n_image(version: int) -> int:
    """The image model's inputs (and tables)."""
    return 0 if version == 1 else (N_IMAGE if version < 5 else N_IMAGE5 if version < 8 else N_IMAGE8)


def n_run(version: int) -> int:
    """The run model's inputs (and state-map rows)."""
    return N_RUN if version >= 3 else 0


def n_inputs(version: int) -> int:
    """The mixers' inputs: two per model, the image model's, the run model's, the long match model's, the
    expected-byte model's, two of the match model, a bias."""
    return (2 * n_models(version) + n_image(version) + n_run(version) + n_long(version) + n_ebyte(version) + 3
            + n_sure(version))


def n_sure(version: int) -> int:
    """Version 10's third input per model, after the bias: its state's p where every bit its slot saw was the same."""
    return n_models(version) if version >= 10 else 0
