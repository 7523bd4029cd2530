"""lmzip explain: the costs are what the coder pays, and every view renders any input safely."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from lmzip.cli.main import main
from lmzip.coding import codec
from lmzip.coding import format as fmt
from lmzip.explain.analysis import compare, explain, position_curve, surprising_spans
from lmzip.explain.view import display_pieces, html_page, terminal_text
from tests.conftest import TEXT


def test_costs_are_what_the_coder_pays(byte_model):
    data = TEXT[:600]
    ex = explain(data, byte_model, segment=100)
    blob, head, ideal = codec.encode(data, byte_model, codec.Settings(segment=100))
    assert not head.stored and b"".join(ex.pieces) == data
    payload_bits = 8 * (len(blob) - head.size)
    assert payload_bits - 64 <= ex.bits.sum() <= payload_bits  # only the coder's final flush is extra
    assert abs(ex.bits.sum() - ideal) < 0.01 * ideal
    assert list(ex.position[:3]) == [0, 1, 2] and ex.position.max() == 99


def test_surprising_spans_and_comparison(gpt_model, byte_model):
    ex = explain(TEXT[:300], gpt_model)
    spans = surprising_spans(ex, 3, 4)
    assert len(spans) == 3 and spans[0][1] >= spans[1][1] >= spans[2][1]
    assert np.allclose(compare(ex, ex), 0)
    other = explain(TEXT[:300], byte_model, top_k=0)
    assert compare(ex, other).sum() == pytest.approx(ex.bits.sum() - other.bits.sum())


def test_unsafe_bytes_are_escaped():
    shown = "".join(display_pieces([b"\x1b[31mred", b"\xff\xfe", "é".encode()[:1], "é".encode()[1:], b"\r\n"]))
    assert "\x1b" not in shown and "\\x1b" in shown and "\\xff" in shown and "é" in shown and "↵\n" in shown


def test_views_render(bpe_model, gpt_model):
    data = TEXT[:400] + b"\x00\x1b\xff binary"
    ex = explain(data, bpe_model)
    other = explain(data, gpt_model, top_k=0)
    assert "quick" in terminal_text(ex, 1000).plain
    page = html_page(ex, other, max_tokens=20, title="t")
    assert page.startswith("<!doctype html>") and "http" not in page.replace("http-equiv", "")
    assert "top: " in page and "tiny-bpe vs tiny-gpt" in page and "Showing the first 20" in page


def test_position_curve(byte_model):
    ex = explain(TEXT[:500], byte_model, segment=50, top_k=0)
    pos, bpt, bpb = position_curve(ex, 50)
    assert len(pos) == 50 and not np.isnan(bpb).any() and bpt[0] > 0


def test_cli_explain(model_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_bytes(TEXT[:500])
    run = CliRunner().invoke
    r = run(main, ["explain", "-m", "tiny-gpt", "--html", "a.html", "--vs", "tiny-gpt", "a.txt"])
    assert r.exit_code == 0, r.output
    assert "bits per byte" in r.stdout and (tmp_path / "a.html").read_text().count("<span") > 100
    r = run(main, ["explain", "-m", "tiny-gpt", "--positions", "p.png", "--segment", "64", "a.txt"])
    assert r.exit_code == 0 and (tmp_path / "p.png").stat().st_size > 1000
    assert len(json.loads((tmp_path / "p.json").read_text())["tiny-gpt"]["bpb"]) == 64
    r = run(main, ["explain", "-m", "tiny-gpt", "missing.txt"])
    assert r.exit_code == 1 and "missing.txt" in r.stderr
    assert fmt.MAGIC not in (tmp_path / "a.html").read_bytes()
