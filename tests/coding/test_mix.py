"""--mix: counting mixed into the language model (format 11, lmzip.coding.mix), tokens coded bit by bit;
repeats get cheaper."""

from __future__ import annotations

import io
import os
import struct
import zlib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from lmzip.cm import table_bytes
from lmzip.cm.mix import Vocab
from lmzip.coding import codec, legacy, mix, stream
from lmzip.coding import format as fmt
from lmzip.coding.settings import MIX_LEVEL, Settings
from lmzip.errors import FormatError, IntegrityError, LmzipError
from tests.conftest import TEXT

KINDS = {"text": TEXT, "code": b"def f(x):\n    return x * 2  # double\n" * 12, "binary": bytes(range(256)) * 3,
         "one": b"x", "random": os.urandom(2000), "repeats": b"abc" * 700, "mixed": TEXT[:300] + bytes(range(200))}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_of_input_round_trips(bpe_model, kind):
    data = KINDS[kind]
    blob, head, _ = codec.encode(data, bpe_model, Settings(mix=True, segment=40))
    assert codec.decode(*fmt.unpack(blob), bpe_model) == data
    if kind not in ("random", "one"):  # random data is stored without running a model, one byte is stored
        assert head.mix and head.mix_level == MIX_LEVEL and head.version == 12 and len(blob) < len(data) + 100


def test_byte_models_and_groups_round_trip(byte_model):
    blob, head, _ = codec.encode(TEXT, byte_model, Settings(mix=True, segment=64, groups=3))
    assert head.groups == 3 and head.mix
    assert codec.decode(*fmt.unpack(blob), byte_model, workers=1) == TEXT


def test_mixing_codes_smaller_than_the_model_alone(bpe_model):
    """The counting models learn the input's repeats, which a 16-token window cannot see."""
    alone = codec.encode(KINDS["code"], bpe_model, Settings(segment=64))[0]
    mixed = codec.encode(KINDS["code"], bpe_model, Settings(mix=True, segment=64))[0]
    assert len(mixed) < 0.8 * len(alone)


def test_the_token_ranges_of_a_sorted_vocabulary():
    v = Vocab.of([b"b", b"", b"ab", b"a", b"abc", b"c"])
    assert [bytes(v.sbytes[s, : v.slen[s]]) for s in range(6)] == [b"", b"a", b"ab", b"abc", b"b", b"c"]
    assert v.root == 1 and list(v.sperm) == [1, 3, 2, 4, 0, 5] and all(v.sperm[v.rank] == np.arange(6))


class Pieces:
    def __init__(self, *pieces):
        self.pieces, self.vocab_size = pieces, len(pieces)

    def token_bytes(self, i):
        return self.pieces[i]


@pytest.mark.parametrize("pieces", [(b"a", b"b", b"a"), (b"", b"")], ids=["twins", "no-bytes"])
def test_a_vocabulary_that_cannot_be_coded_by_bytes_is_refused(pieces):
    with pytest.raises(mix.Unmixable, match="cannot be coded by their bytes"):
        mix.vocab_of(Pieces(*pieces))


def test_the_vocabulary_is_the_models_outputs():
    """Ids past the tokenizer's have no bytes; ids past the model's outputs (an imported model's special
    tokens) are not there at all, so no count beyond a row is ever read."""
    tok = Pieces(b"a", b"b", b"c")
    assert list(mix.vocab_of(tok, 5).slen) == [0, 0, 1, 1, 1] and len(mix.vocab_of(tok, 2).slen) == 2


def test_a_model_that_cannot_mix_counts_the_block(bpe_model, monkeypatch):
    def refuse(*a):
        raise mix.Unmixable("no")

    monkeypatch.setattr(mix, "vocab_of", refuse)
    heads = _frames(TEXT, bpe_model)
    assert all(h.counting or h.stored for h in heads)


def test_damaged_payloads_fail_cleanly(bpe_model):
    blob, head, _ = codec.encode(TEXT, bpe_model, Settings(mix=True, segment=40))
    for at in (head.size + 3, head.size + len(blob[head.size :]) // 2, len(blob) - 2):
        bad = bytearray(blob)
        bad[at] ^= 0x55
        with pytest.raises((IntegrityError, FormatError)):
            codec.decode(*fmt.unpack(bytes(bad)), bpe_model)
    with pytest.raises(LmzipError):  # cut short: the decoder runs out of bytes
        h, payload = fmt.unpack(blob)
        h.payload_length = 10
        codec.decode(h, payload[:10], bpe_model)


@pytest.mark.parametrize("level, version, message", [
    (0, 11, "does not match the mix flag"), (10, 11, "does not match the mix flag"),
    (6, 10, "reserved bytes 7-10"),
])
def test_headers_with_a_wrong_counting_level_are_refused(bpe_model, level, version, message):
    blob, head, _ = codec.encode(TEXT, bpe_model, Settings(mix=True, segment=40))
    head.mix_level, head.version = level, version
    with pytest.raises(FormatError, match=message):
        fmt.parse_header(head.pack() if version == fmt.VERSION else legacy.pack(head))


@pytest.mark.parametrize("cm, message", [(7, "unsupported cm version 7 mixed in"), (0, "unsupported cm version 0"),
                                         (10, "unsupported cm version 10"), (25, "unsupported cm version 25")])
def test_headers_with_a_mixed_cm_version_this_build_does_not_mix_are_refused(bpe_model, cm, message):
    head = codec.encode(TEXT, bpe_model, Settings(mix=True, segment=40))[1]
    assert (head.version, head.mix_version) == (12, 26)
    head.mix_version = cm
    with pytest.raises(FormatError, match=message):
        fmt.parse_header(head.pack())


def test_format_11_holds_no_cm_version_its_byte_8_is_reserved(bpe_model):
    head = codec.encode(TEXT, bpe_model, Settings(mix=True, segment=40, mix_version=1))[1]
    head.version = 11
    raw = bytearray(legacy.pack(head))
    assert raw[8] == 0 and fmt.parse_header(bytes(raw)).mix_version == 1  # format 11 mixed version 1 in
    raw[8] = 9
    raw[-4:] = struct.pack("<I", zlib.crc32(bytes(raw[:-4])))
    with pytest.raises(FormatError, match="reserved bytes 7-10"):
        fmt.parse_header(bytes(raw))


def test_every_mixed_version_round_trips_and_the_constants_agree(bpe_model):
    """Format 12 writes cm version 26's models mixed in (and version 9's or 11's, which its earlier builds wrote, or
    version 1's where told: format 11's loop, lmzip.cm.mix1, which the format-11 golden files prove); one word for it
    in the settings, the header and the loop."""
    from lmzip.cm import mix as loop
    from lmzip.coding import header, settings

    assert settings.MIX_VERSION == loop.CM_VERSION and header.MIX_VERSIONS == loop.VERSIONS
    data = TEXT * 3
    payloads = {}
    for version in loop.VERSIONS:
        blob, head, _ = codec.encode(data, bpe_model, Settings(mix=True, segment=40, mix_version=version))
        assert head.mix_version == version and fmt.parse_header(blob).mix_version == version
        assert codec.decode(*fmt.unpack(blob), bpe_model) == data
        payloads[version] = fmt.unpack(blob)[1]
    assert len(set(payloads.values())) == len(payloads)  # four versions, four codings


def test_a_counting_level_without_the_mix_flag_is_refused():
    h = fmt.Header(5, 1, stored=True, payload_length=5, mix_level=3)
    with pytest.raises(FormatError, match="without the mix flag"):
        fmt.parse_header(h.pack())


def _frames(data: bytes, model, block_size: int = 1024) -> list[fmt.Header]:
    out = io.BytesIO()
    totals = stream.compress_stream(io.BytesIO(data), out, model,
                                    Settings(mix=True, segment=40, block_size=block_size), workers=1)
    back = io.BytesIO()
    stream.decompress_stream(io.BytesIO(out.getvalue()), back, lambda h: model, workers=1)
    assert back.getvalue() == data
    return totals.headers


def test_each_block_keeps_the_smaller_of_mixed_and_counted(bpe_model):
    data = TEXT[:1024] + bytes(range(256)) * 4 + TEXT[:1000]
    heads = _frames(data, bpe_model)
    for i, h in enumerate(heads):
        block = data[i * 1024 : (i + 1) * 1024]
        mixed = codec.encode(block, bpe_model, Settings(mix=True, segment=40, block_size=1024), block=i,
                             last=h.last)[0]
        counted = stream.counted_instead(block, Settings(mix=True, block_size=1024), i, h.last)[0]
        assert (h.counting, h.mix) == ((True, False) if len(counted) <= len(mixed) else (False, True))
    assert any(h.counting for h in heads)  # the binary block is counted alone


def test_the_memory_a_mixed_frame_needs_is_checked(bpe_model, monkeypatch):
    from lmzip.coding import parallel

    blob, head, _ = codec.encode(TEXT, bpe_model, Settings(mix=True, segment=40))
    from lmzip.cm.mix import CM_VERSION  # the counting models the mixed loop runs

    need, tables = mix.memory(head, bpe_model, 4), table_bytes(MIX_LEVEL, CM_VERSION)
    assert tables < need < tables + (20 << 20)  # the level's tables and a few buffers, for the frame's one group
    assert mix.memory(replace(head, groups=3), bpe_model, 2) > 2 * tables  # two of three groups at once
    monkeypatch.setattr(parallel, "available_memory", lambda: need // 2)
    with pytest.raises(LmzipError, match="of memory to decode"):
        codec.decode(*fmt.unpack(blob), bpe_model)


def test_the_mixed_encoder_gives_up_past_its_budget(bpe_model):
    data = bytes(range(256)) * 8  # the model knows nothing of it: counting alone is far smaller
    st = Settings(mix=True, segment=40)
    full = codec.encode(data, bpe_model, st)[0]
    counted = stream.counted_instead(data, st, 0, True)[0]
    assert len(counted) < len(full) // 2
    assert codec.encode(data, bpe_model, st, budget=mix.Budget(len(counted))) is None
    assert codec.encode(data, bpe_model, st, budget=mix.Budget(len(full))) is not None


def test_a_budget_reads_countings_profile():
    b = mix.Budget(1000, np.array([100, 150, 180, 200]), 400)  # counting's payload after 100, 200, 300, 400 bytes
    assert [b.counted(d) for d in (0, 50, 100, 150, 250, 400, 999)] == [0, 50, 100, 125, 165, 200, 200]
    assert not b.over([1000], [1], [100])  # before the first 16th of the block: only the size counts
    assert b.over([1001], [1], [100])
    assert not b.over([100 - 1 + 64], [100], [200])  # 1% ahead of counting, less the slack (64 bytes)
    assert b.over([100 - 1 + 65], [100], [200])
    assert not mix.Budget(1000).over([999], [100], [200])  # no profile: only the size
    # two groups of 200 bytes, 100 of each coded: the second is held against what counting paid for the
    # block's bytes 200..300 (180 - 150), not its first 100 (100): 130 in all, 1% of it 1.3 bytes
    assert not b.over([100, 92], [100, 100], [200, 200])  # 192 <= 0.99 * 130 + 64
    assert b.over([100, 93], [100, 100], [200, 200])
    assert b.over([600, 401], [100, 100], [200, 200])  # together past the counted payload
    folded = mix.Budget(1000, b.marks, 400, text=200)  # CRLF folding left 200 bytes for the model to code
    assert [folded.counted(d) for d in (50, 100, 125, 200)] == [100, 150, 165, 200]  # where as many block bytes lie


def test_each_cold_start_buys_the_mixed_coder_slack():
    """A block's segments each start the model without context: COLD bytes of slack a cold start, one per
    COLD_SPAN bytes of the block at most (short segments recoup nothing)."""
    b = mix.Budget(1000, np.array([100, 150, 180, 200]), 400, segments=2)
    slack = 64 + 2 * mix.COLD
    assert not b.over([99 + slack], [100], [200]) and b.over([100 + slack], [100], [200])
    assert mix.cold_starts(80, 65536) == 32 and mix.cold_starts(11, 10_000) == 4 and mix.cold_starts(3, 1 << 22) == 3


def test_the_race_counts_the_blocks_cold_starts(bpe_model, monkeypatch):
    """codec.encode hands the race its block's cold starts (one a segment, one per COLD_SPAN bytes at most)."""
    data = " ".join(str(i * i % 9973) for i in range(1500)).encode()
    seen, real = [], mix.Race.__init__
    monkeypatch.setattr(mix.Race, "__init__", lambda self, budget, *a: seen.append(budget) or real(self, budget, *a))
    _frames(data, bpe_model, block_size=len(data))  # segments of 40 tokens: more of them than 2 KB spans
    assert len(seen) == 1 and seen[0].segments == len(data) // mix.COLD_SPAN > 0


def test_the_mixed_loops_rows_filled_when_first_chosen_write_what_rows_filled_at_once_write(bpe_model, monkeypatch):
    """As counting's own (cm version 5 on), the mixed loop's first-layer rows start as zeros and take their start
    weights when first chosen (counting's, the language model's column W_LM): the bytes of rows filled at once."""
    from lmzip.cm import mix as loop

    data, st = TEXT * 2, Settings(mix=True, segment=40)
    lazy = codec.encode(data, bpe_model, st)[0]
    real = loop.allocate

    def filled(*a, **k):
        s = real(*a, **k)
        assert not s.cm.w1.any()
        s.cm.w1[:] = s.work[13][0]
        s.cm.w1[:, -1] = loop.W_LM
        s.work = s.work[:13] + (np.zeros(1, dtype=np.int64),) + s.work[14:]  # fresh_rows: nothing left to fill
        return s

    monkeypatch.setattr(loop, "allocate", filled)
    assert codec.encode(data, bpe_model, st)[0] == lazy


def _gave_up(monkeypatch) -> list[float]:
    """Where the mixed coder gave up, as parts of the block."""
    where, over = [], mix.Budget.over

    def spy(self, outs, dones, groups):
        if over(self, outs, dones, groups):
            where.append(sum(dones) / sum(groups))
            return True
        return False

    monkeypatch.setattr(mix.Budget, "over", spy)
    return where


def test_the_mixed_coder_gives_up_early_where_counting_pays_less(bpe_model, monkeypatch):
    """A block the model knows nothing of: the mixed coder stops in its first part, not at the counted
    frame's whole size, and the block is counted."""
    data = " ".join(str(i * i % 9973) for i in range(1500)).encode()  # numbers (the size alone: 90% in)
    where = _gave_up(monkeypatch)
    heads = _frames(data, bpe_model, block_size=8192)
    assert [h.counting for h in heads] == [True] and where and where[0] < 0.3


def test_the_mixed_coder_runs_on_where_it_wins(bpe_model, monkeypatch):
    where = _gave_up(monkeypatch)
    heads = _frames(TEXT, bpe_model, block_size=8192)
    assert [h.mix for h in heads] == [True] and not where


def test_a_block_counting_codes_to_almost_nothing_never_runs_the_model(gpt_model, monkeypatch):
    """100 KB of zeros: counting writes a few dozen bytes, so the mixed coder (which could gain at most
    those) never runs; text the model can win on still runs it."""
    ran = []
    real = codec.encode
    monkeypatch.setattr(codec, "encode", lambda *a, **k: ran.append(1) or real(*a, **k))
    for data, model_ran in ((bytes(100_000), False), (TEXT, True)):
        ran.clear()
        out = io.BytesIO()
        totals = stream.compress_stream(io.BytesIO(data), out, gpt_model, Settings(mix=True))
        assert bool(ran) is model_ran and (model_ran or totals.first.counting)
        got = io.BytesIO()
        stream.decompress_stream(io.BytesIO(out.getvalue()), got, lambda h: gpt_model)
        assert got.getvalue() == data


@pytest.mark.parametrize("workers", [1, 2])
def test_a_race_gives_up_every_group_in_the_same_round(workers):
    """The groups step in rounds; the budget judges all of them after each: both stop in round 4,
    where the second passes the size, however many compute at once; a group that ends early leaves
    the race without holding up the others."""
    import threading

    race = mix.Race(mix.Budget(1000), 3, workers)
    stopped: dict[int, int] = {}

    def group(i: int, outs: list[int]) -> None:
        race.join(i, 100)
        try:
            for step, out in enumerate(outs):
                if race.arrive(i, out, step + 1):
                    stopped[i] = step
                    return
        finally:
            race.leave(i)

    runs = [[5 * s for s in range(10)], [5, 10, 15, 20, 990, 995], [1, 2]]  # round 4: 20 + 990 > 1000
    threads = [threading.Thread(target=group, args=(i, outs)) for i, outs in enumerate(runs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads) and stopped == {0: 4, 1: 4}


def test_two_groups_decide_alike_side_by_side_and_in_turns(bpe_model):
    """The block's verdict and bytes do not depend on how many groups compute at once."""
    data = TEXT * 3 + " ".join(str(i * i % 9973) for i in range(400)).encode()  # text, then numbers
    st = Settings(mix=True, segment=60, groups=2)
    counted = stream.counted_instead(data, st, 0, True, marks := np.zeros(mix.PROFILE, dtype=np.int64))[0]
    for size in (len(counted), 10 * len(counted)):
        budget = mix.Budget(size, marks, len(data))
        one, two = (codec.encode(data, bpe_model, st, workers=w, budget=budget) for w in (1, 2))
        assert (one is None) == (two is None) and (one is None or one[0] == two[0])


def test_a_block_is_counted_alone_at_a_level_that_suits_its_size(monkeypatch):
    """With mix, counting alone's first pass codes a large block with the mixed frames' cm version, a small one
    with -1's (the budget's fast yardstick; where counting's frame is kept, it is counted again: the next test)."""
    from lmzip.cm import format as cmfmt
    from lmzip.coding import settings as S

    monkeypatch.setattr(S, "COUNTED_LARGE", 1500)
    big = stream.counted_instead(TEXT * 2, Settings(mix=True), 0, False)
    small = stream.counted_instead(TEXT[:1000], Settings(mix=True), 0, False)
    assert (big[1].model_name, small[1].model_name) == (f"cm-{S.LARGE_COUNTED_LEVEL}", f"cm-{S.SMALL_COUNTED_LEVEL}")
    assert S.LARGE_COUNTED_LEVEL > S.COUNTED_LEVEL  # a large block fills larger tables than a recount may take
    big_n = S.COUNTED_LARGE + 1
    assert Settings.make(mix=True, tables=9).counted_for(big_n) == (9, S.COUNTED_VERSION)  # a level's own, where larger
    versions = [blob[head.size + 4] for blob, head, _ in (big, small)]  # each frame's cm stream: "LMCM", version
    assert versions == [S.COUNTED_VERSION, cmfmt.version_for(S.SMALL_COUNTED_LEVEL)] and versions[0] != versions[1]


def test_a_small_block_left_to_counting_is_counted_again_with_the_heavy_models(bpe_model, monkeypatch):
    """Where the mixed coder gives up on a small block, the frame kept is counted as a large block's is (the
    light first pass is only the budget's yardstick), and smaller; where the mixed coder beats the light pass, but
    not by far, its frame is weighed against that count too, the smaller kept."""
    from lmzip.cm import format as cmfmt
    from lmzip.coding import counting
    from lmzip.coding import settings as S

    # real text: on one line repeated, every cm version writes about the same
    data, st = Path(__file__).read_bytes()[:6000], Settings(mix=True)
    light = stream.counted_instead(data, st, 0, False)[0]
    monkeypatch.setattr(codec, "encode", lambda *a, **k: None)  # the mixed coder gives up
    blob, head, _ = stream._encode(data, bpe_model, st, None, 1, block=0, last=False)
    level = st.recount_for(len(data))[0]
    assert head.model_name == f"cm-{level}" and blob[head.size + 4] == S.COUNTED_VERSION
    assert len(blob) < len(light) and stream.decode_frame(head, blob[head.size:], lambda h: bpe_model) == data
    runs, real = [], counting.encode
    monkeypatch.setattr(counting, "encode", lambda *a, **k: runs.append(a[1]) or real(*a, **k))
    won = (b"mixed", head, 0.0)  # the mixed coder's frame, smaller than any counted one
    monkeypatch.setattr(codec, "encode", lambda *a, **k: won)
    assert stream._encode(data, bpe_model, st, None, 1, block=0, last=False) is won
    assert runs == [S.SMALL_COUNTED_LEVEL]  # far below the light count (stream.FAR): nothing more runs
    runs.clear()
    beaten = (b"m" * (len(light) - 1), head, 0.0)  # beats the light pass, not the heavy models
    monkeypatch.setattr(codec, "encode", lambda *a, **k: beaten)
    assert stream._encode(data, bpe_model, st, None, 1, block=0, last=False)[0] == blob
    assert runs == [S.SMALL_COUNTED_LEVEL, level]
    runs.clear()  # a block of tokens too short for the model: counted once, as a frame kept is, and nothing else
    fussy = replace(bpe_model, meta={"training": {"bytes_per_token": 30.0}})
    assert codec.too_short(codec.tokenize(data, fussy), fussy) and not codec.too_short(codec.tokenize(data, bpe_model),
                                                                                        bpe_model)
    monkeypatch.setattr(codec, "encode", lambda *a, **k: pytest.fail("the mixed coder ran"))
    short, _, _ = stream._encode(data, fussy, st, None, 1, block=0, last=False)
    assert short == blob and runs == [level]
    # the tables a kept frame is counted with: no larger than the block fills, no larger than a large block's
    sizes = (1, 11_150, 40_000, S.COUNTED_LARGE, S.COUNTED_LARGE + 1)
    v = S.COUNTED_VERSION
    assert [st.recount_for(n) for n in sizes] == [(1, v), (4, v), (6, v), (S.COUNTED_LEVEL, v), None]
    assert Settings.make(mix=True, tables=9).recount_for(S.COUNTED_LARGE) == (9, v)
    assert S.MIX_VERSION <= v <= cmfmt.VERSION  # the counted frames run models no lighter than the mixed frames'


def test_the_shortest_tokens_a_model_is_tried_on_follow_its_training_text(bpe_model):
    """2/3 of the bytes per token the model's training text had, per 100 tokens; no record: every block."""
    trained = replace(bpe_model, meta={"training": {"bytes_per_token": 3.0}})
    assert mix.token_bytes(trained) == 200
    assert mix.token_bytes(bpe_model) == 0 and mix.token_bytes(replace(bpe_model, meta={})) == 0


def test_a_block_of_short_tokens_is_never_coded_mixed(bpe_model, monkeypatch):
    """The tokenizer's verdict comes before the model: a block cut into tokens shorter than the budget's
    least is left to counting (None) and no group runs; at a lower least the same block is coded."""
    ran = []
    real = codec._encode_group
    monkeypatch.setattr(codec, "_encode_group", lambda *a, **k: ran.append(1) or real(*a, **k))
    per = 100 * len(TEXT) // len(bpe_model.tokenizer.encode(TEXT))  # this block's bytes per 100 tokens
    st = Settings(mix=True)
    assert codec.encode(TEXT, bpe_model, st, budget=mix.Budget(10**6, token_bytes=per + 1)) is None and not ran
    assert codec.encode(TEXT, bpe_model, st, budget=mix.Budget(10**6, token_bytes=per)) is not None and ran


def test_a_settings_lead_reaches_the_budget(bpe_model, monkeypatch):
    """The levels that trail counting longer (lmzip.levels.PATIENT) hand their lead to the budget."""
    seen = []
    real = codec.encode
    monkeypatch.setattr(codec, "encode", lambda *a, budget=None, **k: seen.append(budget)
                        or real(*a, budget=budget, **k))
    for lead in (1, -3):
        stream.compress_stream(io.BytesIO(TEXT), io.BytesIO(), bpe_model, Settings.make(mix=True, lead=lead))
    assert [b.lead for b in seen] == [1, -3]


def test_a_trial_model_behind_at_the_16th_keeps_the_block_counted_and_the_slow_model_idle(bpe_model, gpt_model,
                                                                                          monkeypatch):
    """A slow level first codes each block's 16th with a faster model (Settings.trial): where that one is
    behind counting there, the block is counted without the level's model ever coding; where it is ahead,
    the level's model codes the block to the very bytes it writes without a trial."""
    from lmzip.models import registry

    monkeypatch.setattr(registry, "load", lambda name: bpe_model)  # the trial model, by any name
    ran = []
    real = codec.encode
    monkeypatch.setattr(codec, "encode", lambda data, model, *a, **k: ran.append(model) or real(data, model, *a, **k))
    # hashes in hex, the model knows nothing there; but format 12's mixed coder, version 9's counting inside, stays
    # ahead of the light yardstick on nearly any input of this tiny model, so there it must keep a lead of 50%
    hashes = " ".join(f"{(i * 2654435761) % 2**32:08x}" for i in range(900)).encode()
    for data, lead, level_ran in ((hashes, 50, False), (TEXT, None, True)):
        outs = []
        for trial in ("fast", None):
            ran.clear()
            out = io.BytesIO()
            st = Settings.make(mix=True, segment=40, block_size=8192, trial=trial, lead=lead)
            totals = stream.compress_stream(io.BytesIO(data), out, gpt_model, st, workers=1)
            outs.append(out.getvalue())
            if trial:
                assert ran[0] is bpe_model and (gpt_model in ran) is level_ran
                assert level_ran or all(h.counting for h in totals.headers)
        back = io.BytesIO()
        stream.decompress_stream(io.BytesIO(outs[0]), back, lambda h: gpt_model, workers=1)
        assert back.getvalue() == data
        if level_ran:
            assert outs[0] == outs[1]


def test_a_trial_needs_mix():
    with pytest.raises(ValueError, match="trial"):
        Settings.make(trial="gpt-wide")


def test_encoder_and_decoder_run_one_compiled_mixed_loop(byte_model):
    """Both sides hand the mixed loop arguments of the same types (the payload a writable copy, the byte's
    depth no literal), so it compiles once: a second compile cost a fresh install ~36 s on first decoding."""
    from lmzip.cm import mix as cm_mix

    blob = codec.encode(TEXT[:200], byte_model, Settings(mix=True, segment=64))[0]
    assert codec.decode(*fmt.unpack(blob), byte_model) == TEXT[:200]
    assert len(cm_mix._step.signatures) == 1, cm_mix._step.signatures
    # _byte is compiled in this process only where numba's cache was empty (a clean clone, as CI runs); a
    # _step loaded from the cache carries its own copy and leaves _byte's list empty
    assert len(cm_mix._byte.signatures) <= 1, cm_mix._byte.signatures


def test_mix_round_trips(byte_model, bpe_model):
    for model in (byte_model, bpe_model):
        for data in (TEXT, TEXT[:50], bytes(range(256)) * 3):
            blob, head, _ = codec.encode(data, model, Settings(mix=True, segment=200))
            assert head.mix or head.stored
            assert codec.decode(*fmt.unpack(blob), model) == data


def test_mix_makes_repeats_cheaper(gpt_model):
    rng = np.random.default_rng(0)
    block = bytes(rng.integers(97, 123, 400, dtype=np.uint8))  # unpredictable for the model...
    data = block * 4  # ...until it repeats
    plain = codec.encode(data, gpt_model, Settings(segment=len(data)))[0]
    mixed = codec.encode(data, gpt_model, Settings(mix=True, segment=len(data)))[0]
    assert len(mixed) < 0.5 * len(plain)


def test_repeats_in_other_segments_are_found(gpt_model):
    """Segments are coded side by side: a repeat of what another segment already coded is cheap too."""
    rng = np.random.default_rng(1)
    block = bytes(rng.integers(97, 123, 300, dtype=np.uint8))
    data = block + bytes(rng.integers(97, 123, 100, dtype=np.uint8)) + block  # a repeat, 400 bytes apart
    bits = {}
    for name, mixing in (("plain", False), ("mix", True)):
        bits[name] = codec.encode(data, gpt_model, Settings(mix=mixing, segment=350))[2]  # two segments side by side
    assert bits["mix"] < 0.65 * bits["plain"]  # the second block costs almost nothing (measured: 0.59)


def test_a_mixed_stream_asks_for_the_mixed_loop_beside_counting_before_counting(bpe_model, monkeypatch):
    from lmzip.cm import mix as loop
    from lmzip.coding import counting

    seen = []
    monkeypatch.setattr(loop, "compile_beside", lambda room, cores: seen.append("beside"))
    plain = counting.encode
    monkeypatch.setattr(counting, "encode", lambda *a, **k: seen.append("counting") or plain(*a, **k))
    _frames(TEXT[:1024], bpe_model)
    assert seen[:2] == ["beside", "counting"]  # lmzip.cm.warm: the child compiles while counting's loop does
