"""The blob's header: what a decoder checks before it allocates or decodes anything.

    magic "LMCM" | version | level | original length | CRC32 of the original | payload (docs/format.md)

Version 2 (lmzip 0.8) adds a word model over three words and the bilevel-image model (lmzip.cm.body);
version 3 adds the run model, two indirect models and a mixer by the last two bytes, for ~0.8% fewer bytes
at ~2/3 of the speed; version 4 adds to version 3 a word model and two line models, an expected-byte model,
a run flag in every slot's state, state maps by partial byte for the orders and a match kept after a miss,
for 1.1% fewer bytes over the bench files at ~7/8 of the speed; version 5 adds eight text models (a keyword
before ':' or '=', the gap between words, the last letters and digits, the types of the last bytes, the word's
length, an open bracket or quote, the line above), a long match model, six more image contexts and mixer
weight sets that learn faster while young; version 6 adds a sixth first-layer mixer (its weight sets by the
partial byte x the types of the last two bytes x the word's length), slower mixer rates and APM stages that
update both buckets they read, for 0.9% fewer bytes at ~the same speed; version 7 adds four column models
(the column in the line with the byte before, the line's first byte, the previous line's length: where wrapped
prose breaks), for 0.3% fewer bytes at ~5/6 of the speed; version 8 gives the bilevel-image model a row length
of its own (a vote that the record model's noise does not reset), keeps text in Cyrillic, CJK or UTF-16 out of
it, five more contexts, and the sixth mixer's, the final mixer's and the order-2 APM's contexts by the pixels
around (a fax page of prose 58% smaller, calgary/pic 13%, at the same speed); version 9 looks a context up in four
candidate buckets, not two, and evicts the least used of four (where the tables are full: world192.txt whole
at level 6 1.1% smaller, at ~5/6 of the speed); version 10 adds ten contexts (words three back, stems, the line's
first word, the 1 KiB block, the bytes that followed the current token last) and a third input per model, its
state's p where its slot never wavered (0.5% fewer bytes over the sample at ~5/8 of the speed); version 11 adds
two word-indirect contexts (the word that followed the previous word, or the previous two, last: lmzip.cm.run)
and lets its first mixers learn at a slower rate (0.3% fewer bytes over the sample at about its speed); version 12
keeps the hashed models' contexts in one table they share (a context's row chosen by its hash: a busy model takes
the room a quiet one leaves; world192.txt and bible.txt whole at level 7 0.2-0.3% smaller) and adds four sparse
contexts (bytes 1 and 3 back, 2 and 4, the high nibbles of the last four, bytes 1 and 4: 16- and 32-bit machine
words; calgary/obj2 1.7% smaller); version 13 adds two group mixers, each over one group of inputs only: the
models from 7 on (weight sets by the partial byte x the word's length x the last byte's type) and the orders (by
the partial byte x the previous byte), and a second final weight set, by the partial byte, averaged with the first
(0.44% fewer bytes over the sample); version 14 averages two more final weight sets in, by the previous byte and
by the one before it (0.15% fewer bytes over the sample, 0.2-0.3% on its first 8-32 KiB of each file); version 15
runs version 14's models in a hashed table that fits the input's length as well as the level (SIZED: 2^(the
length's bits + 4) slots a model at most, level 1's at the least; lmzip.cm.model.table_bits), so a small input
no longer fills gigabytes it cannot use, and starts its first-layer weights at 1/32, not 1/16 (0.15% fewer bytes
over the sample, 0.35% on its first 32 KiB of each file); version 16 adds how the last bits were mispredicted (the
misses: the last bit, any of the seven before, any of the eight before those) to the SSE, a fourth APM stage by the
partial byte x the misses x the last byte's type, and to the final mixer's first weight set (0.1% fewer bytes over
the sample); version 17 adds two first-layer mixers that pick their weights by the text's shape (the partial byte x
the types of the last five runs of bytes x which of the last three words hold a capital; x which of the last eight
bytes were spaces or newlines and which punctuation: lmzip.cm.text.shape_set, space_set), as paq8px's text model
picks its mixers', and a number model (a gap's shape, every digit one digit, + the keyword: `number_context`): 0.38%
fewer bytes over the sample; version 18 adds orders 6 and 12 and picks the fifth mixer's weights by the last three
bytes, not two (lmzip.cm.orders: 0.17% fewer bytes over the sample, 1.4% on UTF-16 text); version 19 adds four
contexts of the text's clauses (the text since the last punctuation mark or an open bracket, the words since the
mark, the clause's first word: lmzip.cm.clauses; 0.27% fewer bytes over the sample, 0.50% on world192); version 20
adds the key of the last line with a ':' + this line so far (`lmzip.cm.clauses.line_context`) and the current word's
vowels and consonants and its capitals (lmzip.cm.letters): 0.07% fewer bytes over the sample, 0.39% on world192;
version 21 runs version 20's models and begins its payload with a filter byte: 1 where x86 code's call and jump
distances were made their targets before coding (lmzip.cm.x86; ~5% fewer bytes on x86-64 code), 0 elsewhere (every
bench file); version 22 runs version 21's models and ends the SSE in three more APM stages (the last three
bytes, the last four, the word) and a calibration by counts, per bit position and bin of the refined p
(lmzip.cm.sse: 0.11% fewer bytes over the sample, 0.19% on world192, near-certain bits ~free); version 23 runs
version 22's models in a hashed table of half the room for an input's length (LEAN: 2^(its bits + 3) slots a model,
8 to 16 a byte; still the level's at most), so an input of under 2 MiB at level 9 holds half the memory and codes
faster for it, at ~0.02% more bytes; version 24 adds four contexts of character groups (a run of digits, capitals,
small letters or bytes above 127 one group: a line's shape whatever its words and figures, lmzip.cm.groups): 0.22%
fewer bytes over the sample at level 8, 0.67% on world192's first 512 KiB; version 25 adds five contexts of fields
and phrases (the line key + the word and the one or two before it, the line's first word, the phrase: lmzip.cm.fields):
0.07% fewer over the sample, 0.39% on world192's first 512 KiB; version 26 (FEWER) runs version 25's models less
nine that add next to nothing to the kinds set's files (lmzip.cm.sizes.DROPPED: silenced one at a time, none adds more
than 0.02% to any of the kinds set's ten 100 KB files, most make them smaller; all nine together nothing to six
0.8-1 MB files of the training corpora) for ~16-20% more speed and 13% less memory; version 27 (SETTLED) runs version
26's models, starts a first-layer weight set no bit has chosen yet from the match/orders state's set in use (not from
1/32 everywhere: small files 0.1-0.8% fewer bytes, lmzip.cm.loop.fresh_rows), and silences the text models (words,
indirect, clauses, character groups, fields) where the image model is on over mostly blank bytes (calgary/pic 1.35%,
a line drawing 4.2% fewer bytes); it is what levels 7-9 write (`version_for`), levels 1-6 writing version 2;
version 28 (ORDER0) is an adaptive order-0 model alone, no tables, written instead of version 27 where it codes the
input smaller (bytes drawn independently: lmzip.cm.order0; its payload has no filter byte); version 29 (PRIMED) runs
version 27's models over a primer shipped with lmzip (lmzip.cm.primers, named by the payload's second byte) before
the input's first byte, learning from it without coding it: -7 to -9 count so where the primer fits the input (a
short file of a common kind 5-16% smaller).
Earlier versions decode as they were written, through the same loop with their own tables.

A header can only ask for the tables of a level 1..9 (their size is fixed by the level, from version 15 and the
length it states: never more than the level's) and for an
output no longer than the payload could possibly code: no bit costs less than log2(65536/65535) bits,
so n bytes need at least n / 45426 payload bytes; a claim beyond (payload + 16) * 65536 is refused.
"""

from __future__ import annotations

import struct

from lmzip.errors import FormatError

MAGIC = b"LMCM"
VERSION = 29  # the newest version
VERSIONS = tuple(range(1, 30))  # what this build reads: 1 to VERSION
LEVELS = range(1, 10)
DEFAULT_LEVEL = 6
PRIMED = 29  # version 27's models run over a primer first (lmzip.cm.primers), its number after the filter byte
ORDER0 = 28  # an adaptive order-0 model alone, written where it codes smaller than the level's (lmzip.cm.order0)
SETTLED = 27  # what levels from HEAVY on write: fresh weight sets start from the state's, text models quiet on images
FEWER = 26  # the first version that leaves out version 25's idlest contexts (lmzip.cm.sizes.DROPPED)
FIELDS = 25  # the first version with the field and phrase contexts (lmzip.cm.fields)
GROUPS = 24  # the first version with the character-group contexts (lmzip.cm.groups)
LEAN = 23  # the first version whose hashed table fits the length at 8-16 slots a byte, not 16-32 (lmzip.cm.model)
CALIBRATED = 22  # the first version whose SSE ends in three more APM stages and a calibration (lmzip.cm.sse)
X86 = 21  # the first version whose payload begins with its filter byte (lmzip.cm.x86)
LETTERS = 20  # the first version with the line key and the letters contexts (lmzip.cm.letters)
CLAUSES = 19  # the first version with the clause contexts (lmzip.cm.clauses)
ORDERS = 18  # the first version with orders 6 and 12, its fifth mixer by order 3 (lmzip.cm.orders)
SHAPES = 17  # the first version whose mixers pick weights by the text's shape, with a number model (lmzip.cm.text)
MISSES = 16  # the first version whose SSE and final mixer know how the last bits were mispredicted (lmzip.cm.mixers)
SIZED = 15  # the first version whose hashed table fits the length too, its weights starting lower (lmzip.cm.model)
HEAVY = 7  # the first level that runs the newest version's models; below it, version 2's, several times faster
_HEAD = struct.Struct("<4sBBQI")
HEADER_BYTES = _HEAD.size


def pack(level: int, length: int, crc: int, version: int = SETTLED) -> bytes:
    """The header for a blob of `length` original bytes coded at `level` by cm `version`."""
    return _HEAD.pack(MAGIC, version, level, length, crc)


LIGHT = 2  # the version levels below HEAVY write (lmzip 0.7 reads it)


def version_for(level: int) -> int:
    """The version a new stream of ``level`` is written in (where ORDER0 codes it smaller, that instead:
    lmzip.cm.codec.compress)."""
    return SETTLED if level >= HEAVY else LIGHT


def max_length(payload_bytes: int) -> int:
    """The most original bytes a payload of this size can decode to."""
    return (payload_bytes + 16) * 65536


def parse(blob: bytes) -> tuple[int, int, int, int]:
    """(level, length, crc, version) of a blob, or a one-line FormatError saying what is wrong with it."""
    if len(blob) < HEADER_BYTES:
        if blob[:4] != MAGIC[: len(blob[:4])]:
            raise FormatError("not an lmzip cm stream (bad magic)")
        raise FormatError(f"truncated cm stream: {len(blob)} bytes, the header alone takes {HEADER_BYTES}")
    magic, version, level, length, crc = _HEAD.unpack_from(blob)
    if magic != MAGIC:
        raise FormatError("not an lmzip cm stream (bad magic)")
    if version not in VERSIONS:
        raise FormatError(f"cm stream version {version} is not supported (this build reads 1-{VERSION})")
    if level not in LEVELS:
        raise FormatError(f"cm stream level {level} is out of range 1..9")
    payload = len(blob) - HEADER_BYTES
    if length > max_length(payload):
        raise FormatError(f"cm stream claims {length} bytes from a {payload}-byte payload: corrupt or truncated")
    if length > 0 and payload == 0:
        raise FormatError("truncated cm stream: no payload")
    return level, length, crc, version
