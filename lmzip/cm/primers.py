"""Primers: texts shipped with lmzip that cm version 29 (PRIMED) runs its models over before a block's first byte.

A primer's bytes are the stream's history before the block: every model learns from them and none of them is coded,
so a short file of a common kind starts with its words, keywords and markup known (brotli's built-in dictionary and a
zstd dictionary are the same idea; paq8px starts from nothing). The decoder runs the same primer first, so a primer's
bytes are part of the format: each is pinned by its SHA-256 here and in the tests, and a new primer takes a new number.

The encoder picks the primer by the kind of the block's first HEAD bytes (`choose`: their script, or none where
they are not text) and keeps it where it codes the block's first bytes smaller with the light models
(lmzip.cm.codec: European prose in other languages than English, for one, codes larger after the text primer); the
frame records the choice, so the rule may change without a new version.
Primer 1 is text of several kinds (English prose, C-like code, Lisp, JavaScript, HTML); 2-4 are Chinese, Japanese and
Russian prose. Their sources and licences: lmzip/weights/primers/README.md; benchmarks/make_primers.py rebuilds them.
"""

from __future__ import annotations

import hashlib
import lzma
from functools import cache
from pathlib import Path

import numpy as np

from lmzip.errors import FormatError

NONE = 0
FOLDER = Path(__file__).resolve().parents[1] / "weights" / "primers"
TEXT, ZH, JA, RU = 1, 2, 3, 4
PRIMERS = {  # number: (file, SHA-256 of its bytes as the models read them)
    TEXT: ("text.txt.xz", "3f7ecfab85d9cdbefd3c44da22b2816ccbf3860963bb20f2d5917e0999a75676"),
    ZH: ("zh.txt.xz", "7e465ea7cf77bf77d5e3bd676de8fae2f9ba344558477847068d4faf0b48f49b"),
    JA: ("ja.txt.xz", "2cfc05553144f5aae71bda7fab2856b3b7052dd6149faca1986648c27b4352c9"),
    RU: ("ru.txt.xz", "0b58aed319949a08f4d9b85f841c083e59693d6c516b3388effad791919b116d"),
}
LONGEST = 1 << 18  # no primer is longer (the tables' room for one: lmzip.cm.model.table_bytes)
MOST = 1 << 20  # the longest input a primer runs before: beyond, the input's own statistics outweigh what a primer
# gives and its history in the tables costs (a 1.45 MB Japanese novel 0.4% larger primed, a 703 KB Russian one 3.5%
# smaller, at level 8)
HEAD = 1 << 16  # the block's bytes the yardstick reads


@cache
def load(number: int) -> np.ndarray:
    """Primer ``number``'s bytes (its SHA-256 checked); FormatError where this build has no such primer."""
    if number not in PRIMERS:
        raise FormatError(f"cm stream names primer {number}, which this build does not know")
    name, digest = PRIMERS[number]
    try:
        data = lzma.decompress((FOLDER / name).read_bytes())
    except (OSError, lzma.LZMAError) as e:  # an install without its primers, or a damaged one
        raise FormatError(f"primer {number} ({FOLDER / name}) cannot be read ({e}): reinstall lmzip") from e
    if hashlib.sha256(data).hexdigest() != digest:
        raise FormatError(f"primer {number} ({FOLDER / name}) is not the one this format names: reinstall lmzip")
    out = np.frombuffer(data, dtype=np.uint8)
    out.flags.writeable = False
    return out


def choose(src: np.ndarray) -> int:
    """The primer of the kind ``src``'s head is (its script: Japanese kana, Chinese characters, Cyrillic; else text),
    or NONE where ``src`` is longer than MOST or its head is not text: over 1/8 of its bytes control bytes (other than
    tab and line ends), bytes UTF-8 never holds, or continuation bytes more or fewer than its lead bytes ask for."""
    head = np.asarray(src[:HEAD], dtype=np.uint8)
    n = len(head)
    counts = np.bincount(head, minlength=256)
    control = int(counts[:32].sum() - counts[9] - counts[10] - counts[13]) + int(counts[127])
    foreign = int(counts[0xC0] + counts[0xC1] + counts[0xF5:].sum())
    asked = int(counts[0xC2:0xE0].sum() + 2 * counts[0xE0:0xF0].sum() + 3 * counts[0xF0:0xF5].sum())
    if n == 0 or len(src) > MOST or (control + foreign + abs(int(counts[0x80:0xC0].sum()) - asked)) * 8 > n:
        return NONE
    lead, after = head[:-1] == 0xE3, head[1:]
    kana = int(np.count_nonzero(lead & (after >= 0x81) & (after <= 0x83)))  # U+3040-U+30FF: E3 81-83 xx
    han = int(counts[0xE4:0xEA].sum())  # U+4000-U+9FFF: E4-E9 xx xx
    if kana * 3 * 16 >= n:  # a sixteenth of the head's bytes in kana
        return JA
    if (han + kana) * 3 * 4 >= n:
        return ZH
    if int(counts[0xD0] + counts[0xD1]) * 2 * 8 >= n:  # U+0400-U+047F
        return RU
    return TEXT
