"""lmzip.cm.fields (cm version 25): the contexts of a record's field, a line and a phrase."""

from __future__ import annotations

import random

import numpy as np

from lmzip import cm
from lmzip.cm import fields
from lmzip.cm.history import N_STATE, PH1, PH2, W0
from lmzip.cm.parts import hash2, slide
from tests.cm.feed import looked_up


def _word(text: bytes) -> int:
    """A word's hash as the loop keeps it (case folded)."""
    w = 0
    for c in text.lower():
        w = hash2(w, c)
    return w


def _phrase(text: bytes) -> tuple[int, int]:
    """PH1, PH2 after ``text``, the word hashes moved on by the loop's own `slide`."""
    h = np.zeros(N_STATE, dtype=np.int64)
    for c in text:
        before = h[W0]
        _, _, h[W0], _ = slide(0, 0, before, 0, c)
        fields.phrase_done(h, c, before)
    return int(h[PH1]), int(h[PH2])


def test_a_phrase_keeps_its_last_two_words_until_a_mark_ends_it():
    """Words joined by spaces or newlines move the phrase on; a quote or a second blank keeps it; a comma ends it."""
    assert _phrase(b"the big dog") == (_word(b"big"), _word(b"the"))
    assert _phrase(b"the big\ndog") == _phrase(b"the  big 'dog") == (_word(b"big"), _word(b"the"))
    assert _phrase(b"the big, dog") == (0, 0)
    assert _phrase(b"the big, red dog") == (_word(b"red"), 0)


def _fed(text: bytes) -> np.ndarray:
    """The field contexts after ``text``, through the loop's own per-byte machinery (version 25)."""
    return looked_up(text, 25)[-1][fields.AT : fields.AT + fields.N_FIELDS]


def test_a_field_and_its_words_are_one_context_wherever_the_record_stands():
    """The same field (its line key) and words share the field contexts across records, another field's do not."""
    a = _fed(b"Name:\n  Algeria\nRailroads:\n  4,060 km total; 2,616 km standard gauge")
    b = _fed(b"Name:\n  Chile\nRailroads:\n  7,766 km total; 3,743 km standard gauge")
    c = _fed(b"Name:\n  Chile\nHighways:\n  7,766 km total; 3,743 km standard gauge")
    assert a[0] == b[0] and a[1] == b[1] and a[0] != c[0] and a[1] != c[1]


def _records(n: int, seed: int) -> bytes:
    """A gazetteer: each record's fields in one order, their values pairs of words where the first is any field's
    and the second is what that first word is followed by in that field alone."""
    rng = random.Random(seed)
    firsts = [b"north", b"south", b"east", b"west", b"central", b"upper", b"lower", b"coastal"]
    seconds = [b"plains", b"hills", b"desert", b"forest", b"lakes", b"coast", b"valleys", b"marsh", b"steppe"]
    keys = [b"Climate", b"Terrain", b"Land use", b"Natural hazards", b"Environment", b"Resources"]
    follows = {key: {f: rng.choice(seconds) for f in firsts} for key in keys}
    out = []
    for k in range(n):
        out.append(b":Country %d Geography\n\n" % k)
        for key in keys:
            parts = [f + b" " + follows[key][f] for f in rng.sample(firsts, rng.randrange(1, 4))]
            out.append(key + b":\n    " + b", ".join(parts) + b"\n")
    return b"".join(out)


def test_the_fields_code_records_smaller():
    """Version 25 writes records of fields smaller than version 24, and decodes them."""
    data = _records(200, 5)
    v25, v24 = cm.compress(data, 7, version=25), cm.compress(data, 7, version=24)
    assert len(v25) < len(v24) * 0.99 and cm.decompress(v25) == data
