"""`lmzip bench` wherever it runs: the bundled corpora, ./lmzip-bench/ by default, the progress bar,
the published figures with their sources, and `make bench` still writing benchmarks/results/."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from lmzip.bench import published, report
from lmzip.bench import runner as bench
from lmzip.cli import ui
from lmzip.cli.main import main
from lmzip.errors import LmzipError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def two_files(tmp_path, monkeypatch):
    """Two small files in a scratch folder that is also the current folder; no lmzip models."""
    monkeypatch.setenv("LMZIP_MODELS", str(tmp_path / "none"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_bytes(b"abcabcabc" * 50)
    (tmp_path / "b.txt").write_bytes(b"hello world " * 40)
    return ["a.txt", "b.txt"]


def test_results_go_to_lmzip_bench_in_the_current_folder(two_files, tmp_path):
    r = CliRunner().invoke(main, ["bench", *two_files, "--compressors", "gzip", "--no-plots"])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "lmzip-bench" / "results.json").read_text())
    assert [x["file"] for x in doc["rows"]] == two_files and all(x["verified"] for x in doc["rows"])
    assert "wrote lmzip-bench/results.json" in r.stderr


def test_out_still_wins_and_must_be_a_writable_folder(two_files, tmp_path):
    r = CliRunner().invoke(main, ["bench", "a.txt", "--compressors", "gzip", "--no-plots", "--out", "res"])
    assert r.exit_code == 0 and (tmp_path / "res" / "results.md").is_file() and not (tmp_path / "lmzip-bench").exists()
    r = CliRunner().invoke(main, ["bench", "a.txt", "--compressors", "gzip", "--out", "b.txt"])
    assert r.exit_code == 1 and "--out b.txt: not a folder" in r.stderr and "Traceback" not in r.output


def test_the_bundled_corpora_are_found_and_bad_names_are_one_line(tmp_path, monkeypatch):
    assert bench.bundled_corpus() == ROOT / "corpora"  # a source checkout: the top-level folder
    (tmp_path / "lmzip" / "corpora").mkdir(parents=True)
    (tmp_path / "lmzip" / "corpora" / "MANIFEST.tsv").write_text("path\n")
    assert bench.bundled_corpus(tmp_path / "lmzip") == tmp_path / "lmzip" / "corpora"  # an install
    with pytest.raises(LmzipError, match="no bundled corpora; give --corpus DIR"):
        bench.bundled_corpus(tmp_path / "elsewhere" / "lmzip")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["bench", "--files", "no-such-file", "--compressors", "gzip"])
    assert r.exit_code == 1 and "no-such-file: no such file in" in r.stderr and not (tmp_path / "lmzip-bench").exists()
    r = CliRunner().invoke(main, ["bench", "--corpus", "missing", "--compressors", "gzip"])
    assert r.exit_code == 1 and "missing: corpus folder not found" in r.stderr


def terminal(monkeypatch) -> io.StringIO:
    """Make the progress bar's console a terminal writing into a buffer."""
    buf = io.StringIO()
    monkeypatch.setattr(ui, "err", Console(file=buf, force_terminal=True, width=120))
    return buf


def test_progress_names_the_compressor_and_file_and_counts_on_a_terminal(two_files, monkeypatch):
    buf = terminal(monkeypatch)
    r = CliRunner().invoke(main, ["bench", *two_files, "--compressors", "gzip,bzip2", "--no-plots"])
    assert r.exit_code == 0, r.output
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    for what in ("bench gzip × a.txt", "bench bzip2 × b.txt", "0/4", "4/4", "ETA"):
        assert what in shown, what


@pytest.mark.parametrize("flag", ["--no-progress", "-q"])
def test_no_progress_and_quiet_draw_no_bar(two_files, monkeypatch, flag):
    buf = terminal(monkeypatch)
    r = CliRunner().invoke(main, ["bench", *two_files, "--compressors", "gzip", "--no-plots", flag])
    assert r.exit_code == 0 and "bench gzip" not in buf.getvalue() and "1/2" not in buf.getvalue()


def test_no_progress_when_stderr_is_not_a_terminal(two_files):
    r = CliRunner().invoke(main, ["bench", *two_files, "--compressors", "gzip", "--no-plots"])
    assert r.exit_code == 0 and "×" not in r.stderr and "ETA" not in r.stderr


def test_published_figures_cite_their_publications_not_a_repository_file():
    figures = published.figures()
    assert {f["compressor"] for f in figures} == set(published.SOURCES)
    assert all(f["source"].startswith("https://") for f in figures)
    doc = {"environment": bench.environment("lmzip bench"), "rows": [], "published": figures}
    md = report.markdown(doc)
    for title, url in published.SOURCES.values():
        assert f"[{title}]({url})" in md
    assert "shared/" not in md and "shared/" not in Path(report.__file__).read_text()
    old = {**doc, "published": [{k: v for k, v in f.items() if k != "source"} for f in figures]}
    assert report.markdown(old) == md  # results written before the sources were stored cite them too


def test_make_bench_writes_where_the_readme_generator_reads():
    make = (ROOT / "Makefile").read_text()
    bench_line = next(line for line in make.splitlines() if "lmzip bench" in line)
    out = bench_line.split("--out", 1)[1].split()[0]
    assert (ROOT / out).resolve() == (ROOT / "benchmarks" / "results" / "default").resolve()


def test_without_matplotlib_the_tables_are_written_and_the_plots_left_out(two_files, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    r = CliRunner().invoke(main, ["bench", "a.txt", "--compressors", "gzip"])
    assert r.exit_code == 0 and "matplotlib is not installed, so no plots" in r.stderr
    assert sorted(p.name for p in (tmp_path / "lmzip-bench").iterdir()) == ["results.csv", "results.json", "results.md"]


def test_block_size_codes_lmzips_compressors_in_blocks_and_bad_sizes_are_one_line(two_files, tmp_path):
    from lmzip.api import LMCompressor

    data = b"hello world, three blocks " * 100
    (tmp_path / "c.txt").write_bytes(data)
    r = CliRunner().invoke(main, ["bench", "c.txt", "--compressors", "gzip,lstm-small", "--block-size", "1K",
                                  "--no-plots", "-q"])
    assert r.exit_code == 0, r.output
    gz, lm = json.loads((tmp_path / "lmzip-bench" / "results.json").read_text())["rows"]
    assert gz["settings"] == "-9" and lm["settings"].endswith(", blocks of 1,024 bytes") and lm["verified"]
    blocks = LMCompressor("lstm-small", threads=1, block_size=1024).compress(data)
    assert lm["compressed_bytes"] == len(blocks) != len(LMCompressor("lstm-small", threads=1).compress(data))
    for size, message in (("12", "--block-size must be 1 KiB .. 4 GiB"), ("4X", "--block-size: '4X' is not a size"),
                          ("²K", "--block-size: '²K' is not a size")):
        r = CliRunner().invoke(main, ["bench", "a.txt", "--compressors", "gzip", "--block-size", size, "--out", "x"])
        assert r.exit_code == 1 and r.stderr.startswith(f"lmzip: {message}") and not (tmp_path / "x").exists()
