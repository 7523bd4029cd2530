"""lmzip.cm: round trips on every kind of input, a golden digest of the arithmetic, hostile headers,
and the memory a level states."""

from __future__ import annotations

import hashlib
import random
import struct
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest

from lmzip import cm
from lmzip.cm import format as fmt
from lmzip.cm import image
from lmzip.cm.model import allocate, table_bits, table_bytes
from lmzip.errors import FormatError, IntegrityError, LmzipError

LEVEL = 1  # the smallest tables: fast to allocate, same code path as every level

TEXT = (b"It was the best of times, it was the worst of times, it was the age of wisdom, "
        b"it was the age of foolishness.\n") * 8 + "Ünïcödé текст 中文字符\n".encode() * 4
CODE = Path(__file__).read_bytes()
BINARY = struct.pack("<200I", *range(0, 200 * 7919, 7919)) + bytes(range(256)) * 2


def _random(n: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(n)


CASES = {
    "empty": b"",
    "one": b"x",
    "all256": bytes(range(256)),
    "random": _random(3000),
    "repetitive": b"ab" * 5000,
    "zeros": bytes(20000),
    "text": TEXT,
    "code": CODE,
    "binary": BINARY,
}


ROUND_TRIPS = [(name, v) for v in fmt.VERSIONS for name in CASES
               if v in (1, fmt.LIGHT, fmt.SETTLED, fmt.ORDER0, fmt.PRIMED) or name in ("text", "code", "binary")]


@pytest.mark.parametrize("name, version", ROUND_TRIPS)
def test_round_trip(name, version, request):
    """Every case through the first, the light and the newest version; text, code and binary through each version
    between (their bytes are pinned by the golden digests and files)."""
    data = CASES[name]
    if version == fmt.PRIMED:  # the mechanism; the real primers' bytes: tests/cm/test_primers.py
        request.getfixturevalue("short_primers")
    blob = cm.compress(data, LEVEL, version=version)
    unprimed = version == fmt.PRIMED and name not in ("text", "code")
    assert blob[4] == (fmt.SETTLED if unprimed else version)  # which models coded it (no primer fits: version 27's)
    assert cm.decompress(blob) == data


def test_compresses_what_repeats():
    assert len(cm.compress(b"ab" * 5000, LEVEL)) < 60
    assert len(cm.compress(TEXT, LEVEL)) < len(zlib.compress(TEXT, 9))
    assert len(cm.compress(_random(3000), LEVEL)) < 3000 * 1.05  # random bytes barely expand


def test_levels_round_trip_and_differ():
    blobs = {lv: cm.compress(TEXT, lv) for lv in (1, 2)}
    assert all(cm.decompress(b) == TEXT for b in blobs.values())
    assert blobs[1][5] == 1 and blobs[2][5] == 2  # the level is in the header


# sha256 of cm.compress(GOLDEN_INPUT, 1) in each version: changes only when a version's models change, on
# purpose (which they must not: files of every version decode with the models that wrote them).
GOLDEN_INPUT = TEXT + BINARY + bytes(range(256))
GOLDEN = {1: "de439c5a0b4ae690bd2a28dbd9e73b781d207db38388e1582d62fde3c671b851",
          2: "6311bfdfebf44f56b0974934839fd825f487fdff518352f67f4f181589c95ccd",
          3: "154805dfe7d66f4c82ee6c890096d475c814a91134f5539226c78b28494f8a50",
          4: "c26834380e75e362eda58dcae40f0a7eb76545fbc5dbe443ede4cbf979f33e5c",
          5: "e140211c31a230f5057aef6cd2154db8f68205e9095908e833ac9829b6a4e970",
          6: "8015d5fe93543cbec35924be9d803202a70a94abccc95ad49469df2fb1e2b724",
          7: "5330509111ce8142166eb3928be95378fc0ce8961b54836d5af0fe835bcdeb56",
          8: "f936c461b992697c34e90e6b7b75f42b48f7490acd92f243aaef25df08ed8dd8",
          9: "939bc41931a1842a1e8f692402b63a72821b6989e509b78dd71816ebd86d7d45",
          10: "a5478873dc3d8e8bae151dfe9bf00b9f80b00d51920cbbfcfa4a0e2cb8e186d8",
          11: "cb4689ae0be956f7748d6f41407082b25231e9245cfad929287e7688afff0812",
          12: "68ccef0d6974fabfa3de1f1b8d9268970a0b4cb8fb3b9f51ff83c670d6f21f10",
          13: "91ee30b1eac2921cc771268d5124ee21a583e45d330e055838cad49659642a5f",
          14: "b85daf83e2c4383706dcb851430ec256fca21a4b3a81fa96b938acb016a04af0",
          15: "6c131ae13986507ee38294f6d2b0a73e6ed44e65340644c5cda926ee5e731754",
          16: "be09199ef2434025cde7cdb2962dadf0693ccfd12ecc5777b24c94f969cbb049",
          17: "9a6f37cccb461252f3c24c32e22bc205005520d30f42ffbdfcc006502919fb22",
          18: "409fab28870ab3a0fb02bf3075fa20096379e9917403f812cc1ad12680a88da9",
          19: "287e6cf91042d32b559d9e4d3b29b64e2e689c05714ed96bff4e334fd63c7d4e",
          20: "aa864ba51e8a085018b23f1bb280640d05d8f35c1fb1e76dbaa8f07ee7d837e9",
          21: "490df0a0ec3258b28699800143ba368448fc300182f261dd4402e50554f65015",
          22: "c4c5002467c909301470055c8abe91e8847741db2257e07ccf0f86b01a26391e",
          23: "25c5adeb25abb3ffd9ae62eafb4152863764024891d674519e2a436ecc7d2a18",
          24: "6cf57ab4affcb190637757f21d2f96a53bc8e3f4d3d13a518ea556d7f726b9eb",
          25: "c3bb156294fd6ec854e870a59f9f9bb6bcc3f38275af50e0dd44f378e0f305a8",
          26: "032933b6325cf181d7081f0be28bcfaa5b1681d4869ca9a77991b5a8ebaa7590",
          27: "a058f95a0f8e0b2519c920201bf89c7e01d6345265cbe15396100347ae0c1f26",
          28: "40ab2b07f833f48d85e69d509b9197a8ab9c681352321c0b4f989a17fca0dc01",
          29: "a058f95a0f8e0b2519c920201bf89c7e01d6345265cbe15396100347ae0c1f26"}  # no primer fits: 27's bytes


@pytest.mark.parametrize("version", fmt.VERSIONS)
def test_golden_digest(version):
    assert hashlib.sha256(cm.compress(GOLDEN_INPUT, 1, version=version)).hexdigest() == GOLDEN[version]
    assert fmt.VERSION == max(GOLDEN)  # a new version comes with its digest


def _bitmap(rows: int = 128, width: int = 32) -> bytes:
    """A 1-bit image (``width`` bytes a row) of a few filled discs: what the image model sees in a fax page."""
    rng = random.Random(3)
    discs = [(rng.randrange(width * 8), rng.randrange(rows), rng.randrange(4, 20)) for _ in range(6)]
    out = bytearray()
    for y in range(rows):
        for b in range(width):
            byte = 0
            for bit in range(8):
                x = b * 8 + bit
                byte = (byte << 1) | any((x - cx) ** 2 + (y - cy) ** 2 < r * r for cx, cy, r in discs)
            out.append(byte)
    return bytes(out)


@pytest.mark.parametrize("data, gain", [(_bitmap(), 0.85), (TEXT * 4 + CODE, 1.01)], ids=["bitmap", "text+code"])
def test_version_2_codes_smaller_than_1(data, gain):
    """The image model pays on a bitmap (147 -> 110 bytes); where nothing of version 2 pays (11 KB of
    text and this file's code) it costs at most 1%."""
    one, two = (len(cm.compress(data, LEVEL, version=v)) for v in (1, 2))
    assert two < one * gain


def test_version_3_codes_text_and_code_smaller_than_2():
    """The run model, the indirect models and the mixer by two bytes: 2,722 -> 2,690 bytes on 11 KB of
    text and this file's code."""
    two, three = (len(cm.compress(TEXT * 4 + CODE, LEVEL, version=v)) for v in (2, 3))
    assert three < two * 0.995


def test_version_4_codes_text_and_code_smaller_than_3():
    """The word and line models, the expected-byte model, the slots' run flag, the orders' state maps by partial
    byte and the match kept after a miss: 3,024 -> 2,976 bytes on 11 KB of text and this file's code."""
    three, four = (len(cm.compress(TEXT * 4 + CODE, LEVEL, version=v)) for v in (3, 4))
    assert four < three * 0.995


def test_version_5_codes_text_and_code_smaller_than_4():
    """The text models (keyword, gap, letters, types, brackets, the line above), the long match, six more image
    contexts and young weight sets learning faster: 3,112 -> 3,060 bytes on 11 KB of text and this file's code."""
    four, five = (len(cm.compress(TEXT * 4 + CODE, LEVEL, version=v)) for v in (4, 5))
    assert five < four * 0.995


def test_version_6_codes_code_smaller_than_5():
    """The sixth mixer (by the partial byte, the types of the last two bytes and the word's length), the mixer
    rates settling sooner and lower, young weight sets faster, the APM stages updating both buckets: 19,590 ->
    19,291 bytes on the 89 KB of lmzip/cm's source."""
    src = b"".join(p.read_bytes() for p in sorted((Path(cm.__file__).parent).glob("*.py")))
    five, six = (len(cm.compress(src, LEVEL, version=v)) for v in (5, 6))
    assert six < five * 0.995


def test_version_7_codes_wrapped_prose_smaller_than_6():
    """The column models see where a wrapped line breaks: 3,000 words of the test text drawn at random and
    wrapped at 72 columns, 1,616 -> 1,583 bytes."""
    rng = random.Random(1)
    words = TEXT.decode("latin-1").split()
    prose = textwrap.fill(" ".join(rng.choice(words) for _ in range(3000)), 72).encode()
    six, seven = (len(cm.compress(prose, LEVEL, version=v)) for v in (6, 7))
    assert seven < six * 0.99


def test_version_8_codes_a_bitmap_smaller_than_7():
    """The image model's own row, its five more contexts and the weight sets and APM context it picks: a bitmap of
    discs 40 bytes wide, 138 -> 106 bytes."""
    seven, eight = (len(cm.compress(_bitmap(256, 40), LEVEL, version=v)) for v in (7, 8))
    assert eight < seven * 0.85


def test_version_9_keeps_more_contexts_in_full_tables():
    """Four candidate buckets, not two: at level 1 (4,096 buckets a model) the ~100 KB of lmzip/cm's source
    overflows the tables, and a new context evicts the least used of four: 21,441 -> 21,246 bytes."""
    src = b"".join(p.read_bytes() for p in sorted((Path(cm.__file__).parent).glob("*.py")))
    eight, nine = (len(cm.compress(src, LEVEL, version=v)) for v in (8, 9))
    assert nine < eight * 0.995


def test_golden_bitmap_digest():
    """What version 8's image model writes for a bitmap (its row, contexts, weight sets, APM context): the digest
    changes only on purpose."""
    blob = cm.compress(_bitmap(256, 40), 1, version=8)
    assert hashlib.sha256(blob).hexdigest() == "acedaf9103474aec734d1ff907f184b39901c92c3efde66f54f0c3f0e3f9a630"
    assert cm.decompress(blob) == _bitmap(256, 40)


def _gate(data: bytes) -> np.ndarray:
    """The image model's gate after ``data`` (version 8's)."""
    gate, c4 = np.zeros(4, dtype=np.int64), 0
    for c in data:
        image.image_gate(gate, c, c4, True)
        c4 = ((c4 << 8) | c) & 0xFFFFFFFF
    return gate


@pytest.mark.parametrize("text", ["Русский текст, слова и строки.\n".encode(), "中文字符的文本。\n".encode(),
                                  "plain words\n".encode("utf-16-le"), "plain words\n".encode("utf-16-be")],
                         ids=["cyrillic", "cjk", "utf16le", "utf16be"])
def test_image_gate_keeps_text_out(text):
    """Text whose bytes are mostly not ASCII is no image (version 8): its share of UTF-8 (or UTF-16) characters
    shuts the image model off, where a bitmap's leaves it on."""
    assert _gate(text * 20)[image.UTF] >= 32
    bitmap = _gate(_bitmap())
    assert bitmap[image.UTF] < 32 and bitmap[image.BINARY] >= 128 and bitmap[image.FLAT] >= 128


@pytest.mark.parametrize("level, version", [(1, 2), (6, 2), (fmt.HEAVY, 27)])
def test_a_level_writes_its_version(level, version):
    """Levels from HEAVY on write version 27 (version 26's models, settled weight sets, text models silent on
    images); the ones below write version 2, readable by lmzip 0.7."""
    blob = cm.compress(TEXT, level)
    assert blob[4] == version and cm.decompress(blob) == TEXT
    assert [fmt.version_for(lv) for lv in fmt.LEVELS] == [2] * (fmt.HEAVY - 1) + [27] * (10 - fmt.HEAVY)


def test_version_27_starts_a_fresh_weight_set_from_the_states():
    """A weight set no bit has chosen starts at the start weight in version 26; in version 27 the match/orders state's
    set (mixer 1's) starts so and the others copy it as it stands; a set already used is left as it is."""
    from lmzip.cm.loop import fresh_rows

    for settled in (False, True):
        w1 = np.zeros((6, 4), dtype=np.int32)
        w1[1] = [5, 6, 7, 8]  # the state's set, used before
        w1[4] = [1, 2, 3, 4]  # used before too
        wn = np.array([0, 3, 0, 0, 9, 0], dtype=np.int64)
        fresh_rows(w1, np.array([0, 1, 2, 4], dtype=np.int64), wn, np.array([2048], dtype=np.int64), settled)
        start = [2048] * 4
        want = [[5, 6, 7, 8] if settled else start, [5, 6, 7, 8], [5, 6, 7, 8] if settled else start, [0] * 4,
                [1, 2, 3, 4], [0] * 4]
        assert w1.tolist() == want, settled
    w1, wn = np.zeros((3, 2), dtype=np.int32), np.zeros(3, dtype=np.int64)
    fresh_rows(w1, np.array([2, 0], dtype=np.int64), wn, np.array([2048], dtype=np.int64), True)
    assert w1.tolist() == [[2048, 2048], [0, 0], [2048, 2048]]  # the state's set fresh too: both start


@pytest.mark.parametrize("data", [_bitmap(), _bitmap(256, 64)], ids=["4 KB", "16 KB"])
def test_version_27_codes_a_bitmap_smaller_with_its_text_models_silent(data):
    """On a 1-bit image, mostly blank, version 27 silences the text models (their contexts are bytes of pixels, noise
    to the mixers): 104 -> 96 and 113 -> 104 bytes; it decodes."""
    from lmzip.cm import model

    v26, v27 = (cm.compress(data, fmt.HEAVY, version=v) for v in (26, 27))
    assert (len(v26), len(v27)) == {4096: (104, 96), 16384: (113, 104)}[len(data)] and cm.decompress(v27) == data
    t = model.allocate(fmt.HEAVY, 27, len(data))
    assert t.settled and not model.allocate(fmt.HEAVY, 26, len(data)).settled
    quiet = model._mask(model.ON_IMAGES, t)
    assert 0 < (quiet == 0).sum() < len(quiet) and quiet[:14].all()  # the orders' inputs stay


def test_deterministic_across_calls():
    assert cm.compress(CODE, LEVEL) == cm.compress(CODE, LEVEL)


@pytest.mark.parametrize("blob, msg", [
    (b"", "truncated"),
    (b"LMC", "truncated"),
    (b"PK\x03\x04" + bytes(30), "bad magic"),
    (b"LMCM" + bytes([30, 1]) + bytes(12) + b"x", "version 30 is not supported"),
    (b"LMCM" + bytes([0, 1]) + bytes(12) + b"x", "version 0 is not supported"),
    (b"LMCM" + bytes([1, 0]) + bytes(12) + b"x", "level"),
    (b"LMCM" + bytes([1, 12]) + bytes(12) + b"x", "level"),
    (fmt.pack(1, 1 << 40, 0) + b"abc", "claims"),
    (fmt.pack(1, 10, 0), "no payload"),
])
def test_hostile_headers(blob, msg):
    with pytest.raises(FormatError, match=msg) as e:
        cm.decompress(blob)
    assert "\n" not in str(e.value)


def test_crc_mismatch_and_corruption():
    blob = bytearray(cm.compress(TEXT, LEVEL))
    bad_crc = bytes(blob[:14]) + bytes(4) + bytes(blob[18:])
    with pytest.raises(IntegrityError, match="CRC32"):
        cm.decompress(bad_crc)
    blob[40] ^= 0x10  # a flipped payload bit decodes to garbage, which the CRC catches
    with pytest.raises(LmzipError):
        cm.decompress(bytes(blob))
    with pytest.raises(LmzipError):
        cm.decompress(bytes(blob[:30]))  # truncated payload: padded, decoded, refused by the CRC


def test_bad_level_to_compress():
    with pytest.raises(FormatError, match="level"):
        cm.compress(b"abc", 0)


@pytest.mark.parametrize("version", [v for v in fmt.VERSIONS if v != fmt.ORDER0])
@pytest.mark.parametrize("level", [1, 2, 3])
def test_memory_is_what_the_level_states(level, version):
    assert allocate(level, version).nbytes == table_bytes(level, version)
    assert table_bytes(level, fmt.ORDER0) == 4096  # the order-0 model's counts alone (lmzip.cm.order0)


def test_from_version_15_a_small_input_gets_small_tables(monkeypatch):
    """Version 15's hashed table fits the input: 2^(its length's bits + FIT) slots a model, level 1's at the least,
    the level's at the most; the models are version 14's, their first-layer weights starting at 1/32, not 1/16."""
    from lmzip.cm import model
    from lmzip.cm.model import FIT

    assert allocate(9, 15, 1000).ht.shape[1] == 1 << 16 == allocate(1, 15).ht.shape[1]
    assert allocate(9, 15, 40000).ht.shape[1] == 1 << (16 + FIT)
    assert table_bits(9, 14, 1000) == table_bits(9, 15) == (24, 22)  # None: the level's own
    assert table_bits(7, 15, 1 << 30) == (22, 20)
    assert table_bytes(9, 15, 1000) < 400 << 20 < 3000 << 20 < table_bytes(9, 15)
    data, noise = TEXT * 30, _random(3000)  # 5,520 and 3,000 bytes: 2^16 slots a model, as level 1's
    blob = cm.compress(data, 9)
    assert blob[4] == fmt.SETTLED and cm.decompress(blob) == data
    assert model.first_weight(14) == 1 << 12 and model.first_weight(15) == 1 << 11
    assert len(cm.compress(data, 1, version=15)) < len(cm.compress(data, 1, version=14))  # the weights' start
    blob = cm.compress(noise, 3, version=15)
    assert cm.decompress(blob) == noise
    assert hashlib.sha256(blob).hexdigest() == "750c050815b62eafb6c6d35195b2559a02dca6f2c75f3d2774c2f7554a39f3b7"
    monkeypatch.setattr(model, "first_weight", lambda version: 1 << 12)  # version 14's start: what else differs
    assert cm.compress(data, 1, version=15)[18:] == cm.compress(data, 1, version=14)[18:]  # the same table
    assert cm.compress(noise, 3, version=15)[18:] != cm.compress(noise, 3, version=14)[18:]  # 2^16 slots, not 2^18


def test_from_version_23_the_table_holds_half_the_room_for_the_length():
    """Version 23 (LEAN) gives an input 2^(its length's bits + FIT - 1) slots a model: half version 22's, no fewer
    than level 1's, no more than the level's; its models are version 22's, so where both get one size, the payloads
    are the same (only the header's version differs)."""
    from lmzip.cm.model import FIT

    assert allocate(9, 23, 40000).ht.shape[1] == 1 << (16 + FIT - 1) == allocate(9, 22, 40000).ht.shape[1] >> 1
    assert table_bits(9, 23, 1000) == table_bits(9, 22, 1000) == (16, 22)  # level 1's at the least
    assert table_bits(9, 23, 1 << 21) == table_bits(9, 22, 1 << 20) == (24, 22)  # the level's at the most
    assert table_bytes(9, 23, 152089) < 0.7 * table_bytes(9, 22, 152089)  # alice29.txt: 836 MiB, not 1,284
    small, mid = TEXT * 2, TEXT * 5  # 2,048 bytes: 2^16 slots in both; 5,120: 2^16 against 2^17
    assert cm.compress(small, 9, version=23)[18:] == cm.compress(small, 9, version=22)[18:]
    blob = cm.compress(mid, 9, version=23)
    assert blob[4] == 23 and cm.decompress(blob) == mid and blob[18:] != cm.compress(mid, 9, version=22)[18:]
    assert hashlib.sha256(blob).hexdigest() == "ca50df5a00216d8a0d221ca7ad3858219387c57213d0f2037f170712ecd4a3d8"


def test_memory_grows_with_level_within_bound():
    assert table_bytes(1) < 20 << 20  # level 1: ~16 MiB (APMs and mixers are fixed costs)
    assert table_bytes(9) < 4000 << 20  # the largest level: 3,972 MiB (version 26; 4,585 in 25, 4,245 in 24)
    assert all(table_bytes(lv) < table_bytes(lv + 1) for lv in range(1, 9))


def test_bench_registry_entry():
    from lmzip.bench.compressors import build

    c = build("cm")
    assert c.settings == f"-L{cm.DEFAULT_LEVEL}"
    assert c.decompress(c.compress(b"hello hello hello")) == b"hello hello hello"


def test_a_changed_source_clears_the_compiled_cache(tmp_path):
    from lmzip.cm import jitcache

    for path in jitcache.sources():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    jitcache.ensure_fresh(tmp_path)  # first time: stamp written
    stale = tmp_path / "__pycache__" / "model._code-1.py311.nbi"
    stale.write_bytes(b"compiled")
    jitcache.ensure_fresh(tmp_path)  # nothing changed: the cache stays
    assert stale.exists()
    (tmp_path / "parts.py").write_text((tmp_path / "parts.py").read_text() + "\n# edited\n")
    jitcache.ensure_fresh(tmp_path)  # a sibling of model.py changed: numba alone would not notice
    assert not stale.exists()
    stale.write_bytes(b"compiled")
    jitcache.ensure_fresh(tmp_path)
    assert stale.exists()
    for name in ("mixers.py", "text.py", "run.py", "match.py", "image.py", "history.py"):  # inlined too
        (tmp_path / name).write_text((tmp_path / name).read_text() + "\n# edited\n")
        jitcache.ensure_fresh(tmp_path)
        assert not stale.exists(), name
        stale.write_bytes(b"compiled")
    assert (tmp_path / "__pycache__" / "cm-sources.sha256").read_text() == jitcache.sources_digest(tmp_path)


def test_a_changed_source_clears_the_cache_numba_keeps_elsewhere(tmp_path, monkeypatch):
    """With NUMBA_CACHE_DIR numba keeps the machine code there, in a folder named after the sources' folder: a
    stale loop there would be loaded as well (one was, in an experiment: a segmentation fault)."""
    from numba.core import config

    from lmzip.cm import jitcache

    src = tmp_path / "cm"
    src.mkdir()
    for path in jitcache.sources():
        (src / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba"))
    elsewhere = jitcache.cache_dirs(src)[1]
    assert elsewhere.parent == tmp_path / "numba" and elsewhere.name.startswith("cm_")
    elsewhere.mkdir(parents=True)
    stale = elsewhere / "model._code-1.py311.nbi"
    stale.write_bytes(b"compiled")
    jitcache.ensure_fresh(src)  # no stamp there yet: whatever it holds may be stale
    assert not stale.exists() and (elsewhere / "cm-sources.sha256").read_text() == jitcache.sources_digest(src)
    stale.write_bytes(b"compiled")
    jitcache.ensure_fresh(src)
    assert stale.exists()
    (src / "body.py").write_text((src / "body.py").read_text() + "\n# edited\n")
    jitcache.ensure_fresh(src)
    assert not stale.exists()


def test_the_first_run_s_compiled_code_in_a_new_numba_cache_dir_is_kept(tmp_path, monkeypatch):
    """NUMBA_CACHE_DIR naming a folder not made yet (lmzip.arith.jitdir's for a read-only install): the first run
    stamps the folder, so what it compiles there is loaded by the second run, not cleared and compiled again."""
    from numba.core import config

    from lmzip.cm import jitcache

    src = tmp_path / "cm"
    src.mkdir()
    for path in jitcache.sources():
        (src / path.name).write_bytes(path.read_bytes())
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba"))
    jitcache.ensure_fresh(src)  # the first run, before numba compiles
    there = jitcache.cache_dirs(src)[1]
    assert (there / "cm-sources.sha256").read_text() == jitcache.sources_digest(src)
    compiled = there / "model._code-1.py311.nbi"
    compiled.write_bytes(b"compiled")  # what the first run's numba wrote
    jitcache.ensure_fresh(src)  # the second run
    assert compiled.exists()


def test_the_cost_profile_leaves_the_stream_as_it_is():
    """compress(marks=) records the payload's length after every K-th of the input (the mixed coder's
    budget reads it) and writes the very same stream."""
    data = (b"the cost of every part of the input, " * 40 + bytes(range(256)) * 4)[:2000]
    marks = np.zeros(64, dtype=np.int64)
    blob = cm.compress(data, 6, marks)
    assert blob == cm.compress(data, 6)
    assert np.all(np.diff(marks) >= 0) and 0 < marks[0] and marks[-1] <= len(blob) - fmt.HEADER_BYTES
    assert marks[31] < marks[-1] // 2  # the repeated text costs less than the bytes after it


def test_the_cost_profile_holds_where_the_output_grows():
    """Random bytes outgrow the encoder's first output buffer (half the input): the loop stops at a byte, the buffer
    grows and coding goes on where it stopped, the marks too."""
    data, marks = _random(20000), np.zeros(20, dtype=np.int64)
    blob = cm.compress(data, 1, marks)
    assert cm.decompress(blob) == data
    payload = len(blob) - fmt.HEADER_BYTES
    assert payload > 20000 // 2 + 1024 and marks[-1] <= payload
    steps = np.diff(marks, prepend=0)
    assert np.all(np.abs(steps - payload / 20) < payload / 100), steps  # each twentieth costs a twentieth


def test_compress_and_decompress_run_one_compiled_loop():
    """The decoder's payload is typed as the encoder's buffer is (writable), so counting's loop compiles once
    for both sides: a fresh install's first decompress does not wait ~16 s for a second compile."""
    from lmzip.cm.model import _code

    data = b"one loop for both sides " * 20
    assert cm.decompress(cm.compress(data, 1)) == data
    assert len(_code.signatures) == 1, _code.signatures


@pytest.mark.parametrize("version", [7, 10, 11, 12, 13, 17, 18, 19, 23, 24, 25, fmt.SETTLED])
def test_the_ablation_groups_silence_every_models_inputs(version):
    """benchmarks/ablation.py's groups of inputs (model.OFF_*) cover every model of a version, a model's third input
    (version 10) with its first two, and leave the bias on."""
    from lmzip.cm import model

    t = allocate(1, version)
    models = t.ht.shape[0] + 2
    n = t.w1.shape[1] - (models if version >= 10 else 0)  # where the third inputs start, after the bias
    groups = (model.OFF_ORDERS, model.OFF_WORDS, model.OFF_SPARSE, model.OFF_RECORDS, model.OFF_INDIRECT,
              model.OFF_CLAUSES, model.OFF_GROUPS, model.OFF_FIELDS)
    mask = model._mask(sum(groups), t)
    assert not mask[: 2 * models].any() and not mask[n:].any() and mask[n - 1] == 1
    for bit in groups[: 5 + (version >= 19) + (version >= 24) + (version >= 25)]:
        alone = model._mask(bit, t)
        assert 0 < (alone == 0).sum() < 2 * models and (alone[n:] == alone[: 2 * models : 2][: len(alone) - n]).all()
    # each group holds its own models alone: the orders 0-5, 8 (version 18: 6 and 12 too), the sparse models two
    # (version 12: six), the clauses, line key and letters seven, the character groups four, the fields and phrases
    # five (lmzip.cm.body's list); version 26 one fewer sparse, clause and field model (lmzip.cm.sizes.DROPPED)
    silenced = {bit: int((model._mask(bit, t)[: 2 * models] == 0).sum()) // 2 for bit in groups}
    fewer = version >= 26
    assert silenced[model.OFF_ORDERS] == (9 if version >= 18 else 7)
    assert silenced[model.OFF_SPARSE] == (6 - fewer if version >= 12 else 2)
    assert silenced[model.OFF_CLAUSES] == (7 - fewer if version >= 20 else 4 if version >= 19 else 0)
    assert silenced[model.OFF_GROUPS] == (4 if version >= 24 else 0)
    assert silenced[model.OFF_FIELDS] == (5 - fewer if version >= 25 else 0)


def test_one_hashed_model_is_silenced_alone():
    """benchmarks/silence.py's ``silence``: hashed model k's inputs (model k + 2: two, and its third after the bias)
    go to zero, no other; and the file it codes differs from the one with every input (version 25)."""
    from lmzip.cm import model

    t = allocate(1, 25)
    models = t.ht.shape[0] + 2
    n = t.w1.shape[1] - models
    mask = model._mask(0, t, (60,))
    assert sorted(np.flatnonzero(mask == 0)) == [124, 125, n + 62]
    src = np.frombuffer(TEXT, dtype=np.uint8)
    every = model.run(True, src, len(TEXT), allocate(7, 25, len(TEXT)))
    assert model.run(True, src, len(TEXT), allocate(7, 25, len(TEXT)), silence=(60,)).tobytes() != every.tobytes()
    with pytest.raises(ValueError, match="hashed model 65 is not one of this version's 0-64"):
        model._mask(0, t, (65,))
