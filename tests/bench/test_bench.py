"""The benchmark: metrics on known sizes, the round-trip check, every output format, datasets, CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from lmzip.bench import compressors, report
from lmzip.bench import runner as bench
from lmzip.cli.main import main
from lmzip.errors import LmzipError


def row(**kw):
    base = dict(compressor="c", settings="", file="f", original_bytes=1000, compressed_bytes=250, model_bytes=750,
                ideal_bits=1900.0, tokens=500, compress_s=0.5, decompress_s=0.25, peak_mib=10.0, verified=True,
                error=None)
    base.update(kw)
    return base


def test_metrics_on_known_sizes():
    d = report.derive(row())
    assert d["bpb"] == 2.0 and d["ratio"] == 4.0 and d["bpb_with_model"] == 8.0
    assert d["ideal_bpb"] == pytest.approx(1.9) and d["ppl_token"] == pytest.approx(2 ** 3.8)
    assert d["compress_kbps"] == 2.0 and d["decompress_kbps"] == 4.0
    s = report.summary([d, report.derive(row(file="g", original_bytes=3000, compressed_bytes=750))])[0]
    assert s["bpb"] == 2.0 and s["files"] == 2 and s["verified"]


class Broken(compressors.Compressor):
    name, settings = "broken", "flips a byte"

    def compress(self, data):
        return data

    def decompress(self, blob):
        return blob[:-1] + bytes([blob[-1] ^ 1]) if blob else b"x"


@pytest.fixture()
def with_broken(monkeypatch):
    monkeypatch.setitem(compressors.CLASSIC, "broken", compressors.Entry(Broken))


class Queue(list):
    put = list.append


def test_round_trip_check_catches_a_broken_compressor(with_broken, tmp_path):
    (tmp_path / "x.txt").write_bytes(b"hello hello hello")
    q = Queue()
    bench._worker("broken", [bench.Source("x.txt", str(tmp_path / "x.txt"))], q)
    assert q[0] == ("start", "broken", "x.txt") and q[-1] == "broken"
    assert q[1]["verified"] is False and "differ" in q[1]["error"]
    q2 = Queue()
    bench._worker("gzip", [bench.Source("x.txt", str(tmp_path / "x.txt"))], q2)
    assert q2[1]["verified"] is True and q2[1]["compressed_bytes"] > 0


def small_doc():
    rows = [row(compressor="gzip", model_bytes=0, ideal_bits=None, tokens=None),
            row(compressor="gpt", compressed_bytes=200), row(compressor="gpt", file="g", verified=False, error="x")]
    return {"environment": bench.environment("lmzip bench"), "rows": rows, "published": report.PUBLISHED}


def test_every_output_renders(tmp_path):
    doc = small_doc()
    paths = report.save_all(doc, tmp_path)
    assert [p.name for p in paths] == ["results.json", "results.md", "results.csv", "bpb_per_file.png", "pareto.png"]
    md = (tmp_path / "results.md").read_text()
    assert "| f | 1,000 | 2.000 | **1.600** |" in md and "✗" in md and "not run here" in md
    assert (tmp_path / "results.csv").read_text().count("\n") == 4
    assert json.loads((tmp_path / "results.json").read_text())["rows"][1]["compressed_bytes"] == 200
    assert all(p.stat().st_size > 1000 for p in paths[3:])
    assert len(report.rich_tables(doc)) == 2


def test_dataset_source_from_a_local_dataset(tmp_path):
    pytest.importorskip("datasets")
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "train.jsonl").write_text('{"text": "héllo"}\n{"text": "world"}\n')
    src = bench.dataset_source(str(tmp_path / "ds"), "train", "text", None, tmp_path)
    assert src.read() == "héllo\nworld".encode()
    with pytest.raises(Exception, match="no column 'body'"):
        bench.dataset_source(str(tmp_path / "ds"), "train", "body", None, tmp_path)


def test_cli_runs_a_small_bench(tmp_path, monkeypatch):
    monkeypatch.setenv("LMZIP_MODELS", str(tmp_path / "none"))
    (tmp_path / "a.txt").write_bytes(b"abcabcabc" * 100)
    r = CliRunner().invoke(main, ["bench", str(tmp_path / "a.txt"), "--compressors", "gzip,ppmd-o6", "--limit", "500",
                                  "--out", str(tmp_path / "res"), "--no-plots"])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "res" / "results.json").read_text())
    assert [x["original_bytes"] for x in doc["rows"]] == [500, 500] and all(x["verified"] for x in doc["rows"])


def test_update_replaces_only_the_named_compressors_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("LMZIP_MODELS", str(tmp_path / "none"))
    (tmp_path / "a.txt").write_bytes(b"abcabcabc" * 100)
    res = tmp_path / "res"
    base = ["bench", str(tmp_path / "a.txt"), "--out", str(res), "--no-plots"]
    assert CliRunner().invoke(main, [*base, "--compressors", "gzip,bzip2"]).exit_code == 0
    first = json.loads((res / "results.json").read_text())
    r = CliRunner().invoke(main, [*base, "--compressors", "gzip", "--limit", "300", "--update"])
    assert r.exit_code == 0, r.output
    doc = json.loads((res / "results.json").read_text())
    assert [(x["compressor"], x["original_bytes"]) for x in doc["rows"]] == [("gzip", 300), ("bzip2", 900)]
    assert doc["rows"][1] == first["rows"][1] and doc["environment"]["updates"][0]["compressors"] == ["gzip"]
    assert "Re-measured: gzip" in (res / "results.md").read_text()


def test_update_needs_earlier_results(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"abc")
    r = CliRunner().invoke(main, ["bench", str(tmp_path / "a.txt"), "--compressors", "gzip", "--update",
                                  "--out", str(tmp_path / "res")])
    assert r.exit_code == 1 and "--update needs earlier results" in r.stderr and not (tmp_path / "res").exists()


@pytest.mark.parametrize(
    "args, message",
    [(["--compressors", "nope"], "unknown compressor 'nope'"),
     (["--corpus", "/no/such/dir"], "corpus folder not found"),
     (["/no/such/file"], "no such file or folder"),
     (["--dataset", "surely-not-cached/xyz"], "is not available offline")],
)
def test_cli_bad_input(args, message, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    r = CliRunner().invoke(main, ["bench", *args])
    assert r.exit_code == 1 and message in r.stderr and "Traceback" not in r.output


def test_default_suite_leaves_out_learning_rows_and_legacy_models():
    from lmzip.models import registry

    default, full = compressors.suite_names("default"), compressors.suite_names("full")
    assert registry.DEFAULT_MODEL in default and registry.DEFAULT_MODEL + "+mix" in default
    assert not [n for n in default if "+adapt" in n or "+scratch" in n]
    for legacy in registry.LEGACY:
        if legacy in registry.available():  # still installed, so earlier files decode
            assert legacy not in default and legacy in full
    assert set(default) < set(full)


def test_shipped_models_list_the_default_first():
    from lmzip.models import registry

    assert next(iter(registry.available())) == registry.DEFAULT_MODEL


def doc_of(rows, version="1.0"):
    env = {**bench.environment("lmzip bench"), "lmzip": version}
    return {"environment": env, "rows": rows, "published": report.PUBLISHED}


def test_merge_keeps_every_row_split_by_file():
    # one machine measured gpt-wide on f1 and f2, another on f3: all three rows survive the merge
    old = doc_of([row(compressor="gzip", file="f1"), row(compressor="gpt-wide", file="f1", model_id="ab"),
                  row(compressor="gpt-wide", file="f2", model_id="ab")])
    new = doc_of([row(compressor="gpt-wide", file="f3", model_id="ab")])
    merged = report.merge(old, new)
    assert [(r["compressor"], r["file"]) for r in merged["rows"]] == [
        ("gzip", "f1"), ("gpt-wide", "f1"), ("gpt-wide", "f2"), ("gpt-wide", "f3")]
    assert report.summary([report.derive(r) for r in merged["rows"]])[1]["files"] == 3
    assert merged["environment"]["updates"][0]["files"] == ["f3"]
    # a pair in both is replaced in place; the merge of a merge adds up too
    again = report.merge(merged, doc_of([row(compressor="gpt-wide", file="f2", compressed_bytes=1, model_id="ab"),
                                         row(compressor="xz", file="f1")]))
    assert [(r["compressor"], r["file"], r["compressed_bytes"]) for r in again["rows"]] == [
        ("gzip", "f1", 250), ("gpt-wide", "f1", 250), ("gpt-wide", "f2", 1), ("gpt-wide", "f3", 250), ("xz", "f1", 250)]
    assert "Re-measured: gpt-wide (lmzip 1.0" in report.markdown(again)
    assert report.to_csv(again).count("\n") == 6


@pytest.mark.parametrize("new_row, version, what", [
    (row(compressor="gpt-wide", file="f3", model_id="cd"), "1.0", "model id ab on f1 but cd on f3"),
    (row(compressor="gpt-wide", file="f3", model_id="ab"), "2.0", "lmzip version 1.0 on f1 but 2.0 on f3"),
])
def test_merge_refuses_rows_that_disagree(new_row, version, what):
    old = doc_of([row(compressor="gpt-wide", file="f1", model_id="ab")])
    with pytest.raises(LmzipError, match=f"cannot merge: gpt-wide has {what}"):
        report.merge(old, doc_of([new_row], version))
    # re-measuring every file of the compressor replaces them all: nothing left to disagree with
    assert report.merge(old, doc_of([{**new_row, "file": "f1"}], version))["rows"][0]["model_id"] == new_row["model_id"]


def test_update_refuses_a_different_version_before_measuring(tmp_path, monkeypatch):
    monkeypatch.setenv("LMZIP_MODELS", str(tmp_path / "none"))
    (tmp_path / "a.txt").write_bytes(b"abcabcabc" * 100)
    (tmp_path / "b.txt").write_bytes(b"xyz" * 100)
    res = tmp_path / "res"
    assert CliRunner().invoke(main, ["bench", str(tmp_path / "a.txt"), "--compressors", "gzip", "--out", str(res),
                                     "--no-plots"]).exit_code == 0
    doc = json.loads((res / "results.json").read_text())
    doc["rows"][0]["lmzip"] = "0.0.1"
    (res / "results.json").write_text(json.dumps(doc))
    r = CliRunner().invoke(main, ["bench", str(tmp_path / "b.txt"), "--compressors", "gzip", "--out", str(res),
                                  "--no-plots", "--update"])
    assert r.exit_code == 1 and "cannot merge: gzip has lmzip version 0.0.1" in r.stderr
    assert r.stderr.count("\n") == 1 and json.loads((res / "results.json").read_text()) == doc


def test_update_adds_files_measured_elsewhere(tmp_path, monkeypatch):
    monkeypatch.setenv("LMZIP_MODELS", str(tmp_path / "none"))
    for n in "abc":
        (tmp_path / f"{n}.txt").write_bytes(n.encode() * 300)
    res = tmp_path / "res"
    base = ["--compressors", "gzip,bzip2", "--out", str(res), "--no-plots"]
    assert CliRunner().invoke(main, ["bench", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), *base]).exit_code == 0
    r = CliRunner().invoke(main, ["bench", str(tmp_path / "c.txt"), *base, "--update"])
    assert r.exit_code == 0, r.output
    rows = json.loads((res / "results.json").read_text())["rows"]
    assert sorted((x["compressor"], x["file"][-5:]) for x in rows) == sorted(
        (c, f"{n}.txt") for c in ("gzip", "bzip2") for n in "abc")
