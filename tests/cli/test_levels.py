"""Levels -1 … -9: points on the measured frontier, each a shipped model and mode; -m and flags beside them."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from lmzip import api, levels
from lmzip.cli.main import main
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
    points = sorted({lv: n for n, lv in reversed(levels.LEVELS.items())}.values())  # each point's first level
    bpb = [figures[n]["bpb"] for n in points]
    speed = [figures[n]["compress_kbps"] for n in points]
    assert len(points) >= 6 and bpb == sorted(set(bpb), reverse=True) and speed == sorted(set(speed), reverse=True)
    assert all(figures[n] == figures[max(m for m in points if m <= n)] for n in range(1, 10))  # a point's levels alike


@pytest.mark.parametrize("args, model, mix, adapt", [
    (["compress", "-1"], "cm-6", False, False),
    (["-3"], "lstm-wide", True, False),  # gzip's form: no subcommand
    (["-9"], "gpt-large", True, True),
    (["compress", "-2", "--adapt"], "lstm-small", True, True),  # flags add to the level's
    (["compress"], "gpt-wide", True, False),  # no level: the default, -4
    (["compress", "-5", "-m", "lstm-small"], "lstm-small", True, False),  # -m replaces the level's model
])
def test_a_level_codes_with_its_model_and_modes(run, tmp_path, args, model, mix, adapt, model_frames):
    r = run(*args, "-q", "-c", "a.txt")
    assert r.exit_code == 0, r.output
    head = api.inspect(r.stdout_bytes)
    assert (head.model_name, head.mix, head.adapt) == (model, mix, adapt)
    (tmp_path / "x.lmz").write_bytes(r.stdout_bytes)
    back = run("-d", "-9", "-q", "-o", "b.txt", "x.lmz")  # a level means nothing to decompression: ignored
    assert back.exit_code == 0, back.output
    assert (tmp_path / "b.txt").read_bytes() == (tmp_path / "a.txt").read_bytes()


def test_models_prints_the_level_table(run):
    r = run("models")
    assert r.exit_code == 0
    assert "level" in r.stdout and "-9" in r.stdout and "gpt-large" in r.stdout and "--mix --adapt" in r.stdout


KINDS = {"text": b"Alice was beginning to get very tired of sitting by her sister on the bank. ",
         "code": b"for (i = 0; i < n; i++) { s += a[i]; }\n", "binary": bytes(range(0, 256, 3)),
         "empty": b"", "one": b"\n", "random": bytes.fromhex("8f3a1c77e2d94b05") * 3 + b"\x13",
         "repeats": b"ab" * 40}


@pytest.mark.parametrize("level", sorted({lv: n for n, lv in reversed(levels.LEVELS.items())}.values()))
def test_every_level_round_trips_every_kind_of_input(level, model_frames):
    """Each point of the frontier codes every kind of input with its own model and modes (the mixed frame
    kept even where counting alone would be smaller) and gives the bytes back."""
    lv = levels.LEVELS[level]
    c = api.LMCompressor(lv.model, mix=lv.mix, adapt=lv.adapt, jobs=1)
    for kind, data in KINDS.items():
        blob = c.compress(data)
        assert api.decompress(blob, jobs=1) == data, kind
        head = api.inspect(blob)
        if kind in ("text", "code", "repeats"):  # these are coded (the others may be stored: nothing to gain)
            assert not head.stored and head.counting == (lv.model == "cm") and head.mix == lv.mix, kind
