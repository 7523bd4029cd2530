"""Levels -1 … -9: points on the measured frontier, each a shipped model and mode; -m and flags beside them."""

from __future__ import annotations

from itertools import pairwise

import pytest
from click.testing import CliRunner

from lmzip import api, levels
from lmzip.cli.main import main
from lmzip.cm import format as cm_format
from lmzip.coding.settings import MIX_LEVEL
from lmzip.models import registry


@pytest.fixture()
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_bytes(b"A level picks a model and a mode; the tests check which. " * 3)

    def invoke(*args):
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke


def test_the_levels_are_a_frontier_of_shipped_models():
    assert sorted(levels.LEVELS) == list(range(1, 10))
    assert all(lv.model in registry.available() for n, lv in levels.LEVELS.items() if n > 1)
    assert levels.LEVELS[1] == levels.Level("cm")  # counting alone: no model
    lv = levels.LEVELS[levels.DEFAULT]
    assert (lv.model, lv.mix, lv.adapt) == (registry.DEFAULT_MODEL, True, False)  # plain compress is -4
    figures = levels.measured()
    assert sorted(figures) == list(range(1, 10))
    assert len(set(levels.LEVELS.values())) == 9  # nine settings, nine points
    bpb = [figures[n]["bpb"] for n in range(1, 10)]
    speed = [figures[n]["compress_kbps"] for n in range(1, 10)]
    assert bpb == sorted(set(bpb), reverse=True), bpb  # each level writes fewer bytes than every faster one
    # and is no faster than the level below it, within what one measurement varies on a shared VM (-8 and -9 differ
    # in their tables alone: 2.2 and 2.3 KB/s)
    assert all(b <= 1.1 * a for a, b in pairwise(speed)), speed
    assert figures[1]["peak_mib"] <= 300 and all(f["peak_mib"] <= 3 * 1024 for f in figures.values())


@pytest.mark.parametrize("args, model, mix, adapt, tables", [
    (["compress", "-1"], "cm-6", False, False, 0),
    (["-3"], "lstm-small", True, False, MIX_LEVEL),  # gzip's form: no subcommand
    (["-9"], "gpt-large", True, True, 7),  # -9 mixes level 7's counting tables in
    (["compress", "-2", "--adapt"], "lstm-small", True, True, MIX_LEVEL),  # flags add to the level's
    (["compress"], "gpt-wide", True, False, MIX_LEVEL),  # no level: the default, -4
    (["compress", "-5", "-m", "lstm-small"], "lstm-small", True, False, MIX_LEVEL),  # -m replaces the level's model
])
def test_a_level_codes_with_its_model_and_modes(run, tmp_path, args, model, mix, adapt, tables, model_frames):
    r = run(*args, "-q", "-c", "a.txt")
    assert r.exit_code == 0, r.output
    head = api.inspect(r.stdout_bytes)
    assert (head.model_name, head.mix, head.adapt, head.mix_level) == (model, mix, adapt, tables)
    (tmp_path / "x.lmz").write_bytes(r.stdout_bytes)
    back = run("-d", "-9", "-q", "-o", "b.txt", "x.lmz")  # a level means nothing to decompression: ignored
    assert back.exit_code == 0, back.output
    assert (tmp_path / "b.txt").read_bytes() == (tmp_path / "a.txt").read_bytes()


@pytest.mark.parametrize("level", range(2, 10))
def test_the_command_line_codes_a_level_with_every_option_it_sets(run, monkeypatch, level):
    """``-N`` hands the coder the level's whole setting (rows, tables, lead and the trial model too: -7 ... -9 once
    ran without their trial from the command line, slower than the level table said, though to the same bytes)."""
    seen = {}

    class Spy:
        def __init__(self, model, jobs=None, **options):
            seen.update(options, model=model)
            raise SystemExit(0)

    monkeypatch.setattr(api, "LMCompressor", Spy)
    run("compress", f"-{level}", "-q", "-c", "a.txt")
    lv = levels.LEVELS[level]
    assert seen["model"] == lv.model
    assert {k: seen.get(k) for k in lv.options()} == lv.options()


def test_models_prints_the_level_table(run):
    r = run("models")
    assert r.exit_code == 0
    assert "level" in r.stdout and "-9" in r.stdout and "gpt-large" in r.stdout and "--mix --adapt" in r.stdout


KINDS = {"text": b"Alice was beginning to get very tired of sitting by her sister on the bank. ",
         "code": b"for (i = 0; i < n; i++) { s += a[i]; }\n", "binary": bytes(range(0, 256, 3)),
         "empty": b"", "one": b"\n", "random": bytes.fromhex("8f3a1c77e2d94b05") * 3 + b"\x13",
         "repeats": b"ab" * 40}


MODES = {(lv.model, lv.mix, lv.adapt): n for n, lv in reversed(levels.LEVELS.items())}  # each one's first level


@pytest.mark.parametrize("level", sorted(MODES.values()))
def test_every_level_round_trips_every_kind_of_input(level, model_frames):
    """Each model and modes of the levels codes every kind of input (the mixed frame kept even where
    counting alone would be smaller) and gives the bytes back; rows and tables change only the layout."""
    lv = levels.LEVELS[level]
    c = api.LMCompressor(lv.model, jobs=1, **(lv.options() if lv.model != "cm" else {}))
    for kind, data in KINDS.items():
        blob = c.compress(data)
        assert api.decompress(blob, jobs=1) == data, kind
        head = api.inspect(blob)
        if kind in ("text", "code", "repeats"):  # these are coded (the others may be stored: nothing to gain)
            assert not head.stored and head.counting == (lv.model == "cm") and head.mix == lv.mix, kind


def test_fewer_rows_make_longer_segments_never_shorter_ones():
    """A level's rows cap the segments side by side; a small input keeps segments of MIN_SEGMENT tokens
    (fewer rows), unless it learns from scratch, whose rows are kept however short the segments."""
    from lmzip.coding import settings as st

    assert st.Settings(rows=32).layout(100_000)[0] == 3125  # 32 segments
    assert st.Settings(rows=32).layout(4000)[0] == st.MIN_SEGMENT  # 16 segments, not 32 of 125
    assert st.Settings(rows=16, seed=1).layout(4000)[0] == 250  # from scratch: its 16 rows


def test_a_levels_tables_are_the_mixed_and_the_counted_ones():
    """``tables`` sets the counting level mixed in and the one a large block is counted alone at (never
    below the default's); it needs --mix."""
    from lmzip.coding import settings as st

    nine = st.Settings.make(mix=True, tables=9)
    assert (nine.mix_level, nine.counted_level) == (9, 9)
    assert st.Settings.make(mix=True, tables=6).counted_level == st.COUNTED_LEVEL
    assert st.Settings.make(mix=True).mix_level == st.MIX_LEVEL
    for bad in (dict(tables=9), dict(mix=True, tables=10)):
        with pytest.raises(ValueError, match="tables"):
            st.Settings.make(**bad)


def test_a_level_may_count_large_blocks_above_its_tables():
    """``large`` sets the level a block over COUNTED_LARGE bytes is counted alone at, apart from the tables mixed in
    (-9: tables 7, a large block counted at 8, whose 2 GiB of tables a small block's recount never takes: it keeps to
    the tables' level and what its length fills); it needs --mix."""
    from lmzip.coding import settings as st

    nine = st.Settings.make(**levels.LEVELS[9].options())
    assert (nine.mix_level, nine.counted_level, nine.large_level) == (7, 7, 8)
    assert nine.counted_for(st.COUNTED_LARGE + 1) == (8, cm_format.PRIMED)
    assert nine.recount_for(st.COUNTED_LARGE) == (7, cm_format.PRIMED)
    assert nine.recount_for(4000) == (2, cm_format.PRIMED)  # 4000 bytes, 12 bits: no more than level 2 fills
    assert st.Settings.make(mix=True, large=3).counted_for(st.COUNTED_LARGE + 1)[0] == st.COUNTED_LEVEL
    for bad in (dict(large=8), dict(mix=True, large=0)):
        with pytest.raises(ValueError, match="large blocks"):
            st.Settings.make(**bad)


def test_the_top_levels_count_a_block_over_a_primer():
    """-7 ... -9 count a block they give up in cm version 29 (over a primer where one fits it, lmzip.cm.primers); the
    lower levels in COUNTED_VERSION; the counting levels run unprimed, and priming needs --mix."""
    from lmzip.coding import settings as st

    made = {k: st.Settings.make(**lv.options()) for k, lv in levels.LEVELS.items()}
    assert {k for k, s in made.items() if s.counted_version == cm_format.PRIMED} == {7, 8, 9}
    assert st.Settings.make(**levels.LEVELS[4].options()).recount_for(4000) == (2, st.COUNTED_VERSION)
    assert "primed counting" in levels.LEVELS[9].what
    with pytest.raises(ValueError, match="primed counting .* needs --mix"):
        st.Settings.make(primed=True)
