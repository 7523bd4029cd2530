"""lmzip.cm.groups (cm version 24): a line's bytes as character groups, a run of digits or letters one group."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lmzip import cm
from lmzip.cm import groups
from lmzip.cm.history import C4, CG1, CG2, N_STATE

KENNEDY = Path(__file__).parents[2] / "corpora" / "canterbury" / "kennedy.xls"


def _fed(text: bytes) -> np.ndarray:
    """A history after ``text``: its groups, and its last four bytes as the loop keeps them."""
    h = np.zeros(N_STATE, dtype=np.int64)
    for c in text:
        groups.group_done(h, c)
        h[C4] = ((h[C4] << 8) | c) & 0xFFFFFFFF
    return h


def _contexts(text: bytes) -> np.ndarray:
    ctx = np.zeros(groups.AT + groups.N_GROUPS, dtype=np.int64)
    groups.group_contexts(ctx, _fed(text))
    return ctx[groups.AT :]


def test_a_run_of_digits_or_letters_is_one_group():
    """Digits, capitals, small letters and bytes above 127 fold into one group a run; any other byte is its own."""
    h = _fed("Ab 1,234; cd é".encode())  # 11 groups: A b _ 1 , 234 ; _ cd _ é
    assert list((int(h[CG1]) & (2**64 - 1)).to_bytes(8, "big")) == [48, 44, 48, 59, 32, 97, 32, 128]
    assert int(h[CG2]) == groups.JOINED | 0x416120  # the three before; é's second byte joined its first
    assert list((int(_fed(b"x 12 yz")[CG1]) & (2**64 - 1)).to_bytes(8, "big"))[-5:] == [97, 32, 48, 32, 97]


def test_the_last_byte_joining_a_run_is_told_apart():
    """Whether the last byte joined its group's run (the word or number goes on) is part of every context."""
    assert _fed(b"a b")[CG2] & groups.JOINED == 0 and _fed(b"a bc")[CG2] & groups.JOINED != 0
    assert (_contexts(b"a b") != _contexts(b"a bc")).all()


def test_lines_of_one_shape_share_the_contexts_without_their_bytes():
    """Two lines of one shape but other words and figures share the shape-only contexts (the first and the last),
    not the two that hold the last bytes too."""
    a, b = _contexts(b"\nArea: 1,200 km; land 45%"), _contexts(b"\nCoast: 3,700 mi; water 8%")
    assert a[0] == b[0] and a[3] == b[3] and a[1] != b[1] and a[2] != b[2]


def test_each_context_reaches_as_far_back_as_it_says():
    """The first context tells apart texts that differ in the twelfth group back, the third in the seventh, the
    second in the fifth; the fourth (the last four groups) does not see the fifth."""
    tail = b"a,b;c:d.e-f?"  # 12 groups, each a byte
    twelfth, seventh, fifth = b"!" + tail[1:], tail[:5] + b"!" + tail[6:], tail[:7] + b"!" + tail[8:]
    ctx = _contexts(tail)
    assert _contexts(twelfth)[0] != ctx[0] and (_contexts(twelfth)[1:] == ctx[1:]).all()
    assert _contexts(seventh)[2] != ctx[2] and _contexts(seventh)[1] == ctx[1]
    assert _contexts(fifth)[1] != ctx[1] and _contexts(fifth)[3] == ctx[3]


def test_the_groups_code_a_table_smaller():
    """Version 24 writes a spreadsheet's records smaller than version 23, and decodes them."""
    data = KENNEDY.read_bytes()[:60000]
    v24, v23 = cm.compress(data, 7, version=24), cm.compress(data, 7, version=23)
    assert len(v24) < len(v23) * 0.99 and cm.decompress(v24) == data
