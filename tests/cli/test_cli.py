"""The CLI through click's CliRunner: gzip/xz/zstd conventions, exit codes, nothing ever lost."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from lmzip.cli.main import main
from lmzip.coding import codec
from lmzip.coding import format as fmt
from tests.conftest import TEXT


@pytest.fixture()
def work(tmp_path):
    (tmp_path / "work").mkdir()
    return tmp_path / "work"


@pytest.fixture()
def run(model_dir, work, monkeypatch):
    monkeypatch.chdir(work)
    (work / "a.txt").write_bytes(TEXT)

    def invoke(*args, input=None):
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)

    return invoke


def test_compress_then_decompress(run, work):
    r = run("compress", "-m", "tiny-gpt", "a.txt")
    assert r.exit_code == 0, r.output
    assert "a.txt:" in r.stderr and "bpb" in r.stderr
    assert (work / "a.txt").exists()  # kept by default
    (work / "a.txt").rename(work / "orig.txt")
    r = run("decompress", "a.txt.lmz")
    assert r.exit_code == 0, r.output
    assert (work / "a.txt").read_bytes() == TEXT


def test_refuses_to_overwrite_without_force(run, work):
    (work / "a.txt.lmz").write_bytes(b"precious")
    r = run("compress", "-m", "tiny-gpt", "a.txt")
    assert r.exit_code == 1
    assert "already exists; use -f" in r.stderr
    assert (work / "a.txt.lmz").read_bytes() == b"precious"
    assert run("compress", "-m", "tiny-gpt", "-f", "a.txt").exit_code == 0
    assert (work / "a.txt.lmz").read_bytes()[:4] == b"\x89LMZ"


def test_stdout_output_and_stdin(run, work):
    r = run("compress", "-m", "tiny-gpt", "-c", "a.txt")
    assert r.exit_code == 0 and r.stdout_bytes[:4] == b"\x89LMZ"
    assert not (work / "a.txt.lmz").exists()
    r2 = run("decompress", "-c", "--threads", "1", input=r.stdout_bytes)
    assert r2.exit_code == 0 and r2.stdout_bytes == TEXT
    assert run("decompress", "-c", "--threads", "0", input=r.stdout_bytes).exit_code == 2  # checked before any work
    r3 = run("compress", "-m", "tiny-gpt", "-", input=TEXT)
    assert r3.stdout_bytes == r.stdout_bytes


def test_output_option_and_suffix(run, work):
    assert run("compress", "-m", "tiny-gpt", "-S", ".z", "a.txt").exit_code == 0
    assert (work / "a.txt.z").exists()
    assert run("decompress", "-S", ".z", "-o", "b.txt", "a.txt.z").exit_code == 0
    assert (work / "b.txt").read_bytes() == TEXT
    r = run("compress", "-o", "x", "a.txt", "a.txt.z")
    assert r.exit_code == 1 and "-o takes one input" in r.stderr


def test_rm_deletes_only_after_a_verified_round_trip(run, work):
    assert run("compress", "-m", "tiny-gpt", "--rm", "a.txt").exit_code == 0
    assert not (work / "a.txt").exists()
    assert run("decompress", "--rm", "a.txt.lmz").exit_code == 0
    assert (work / "a.txt").read_bytes() == TEXT and not (work / "a.txt.lmz").exists()


def test_many_files_and_warnings(run, work):
    (work / "b.txt").write_bytes(b"bbb" * 50)
    r = run("compress", "-m", "tiny-gpt", "-q", "a.txt", "b.txt")
    assert r.exit_code == 0 and r.stderr == ""
    r = run("compress", "-m", "tiny-gpt", "a.txt.lmz")
    assert r.exit_code == 2 and "already has .lmz suffix" in r.stderr
    r = run("decompress", "a.txt")
    assert r.exit_code == 2 and "unknown suffix" in r.stderr


def test_test_and_list(run, work):
    run("compress", "-m", "tiny-gpt", "a.txt")
    r = run("test", "a.txt.lmz")
    assert r.exit_code == 0 and "a.txt.lmz: OK" in r.stderr
    r = run("list", "a.txt.lmz")
    assert r.exit_code == 0 and "tiny-gpt" in r.stdout and f"{len(TEXT):,}" in r.stdout
    assert "exact integer v3 (int8)" in r.stdout  # the arithmetic version
    r = run("info", "--json", "a.txt.lmz")
    assert '"original_bytes": 1000' not in r.stdout and f'"original_bytes": {len(TEXT)}' in r.stdout
    assert '"arithmetic": "exact integer v3 (int8), the window shifted"' in r.stdout
    assert len(list(work.iterdir())) == 2  # a.txt and a.txt.lmz: test wrote nothing


def test_an_adapt_file_is_listed_with_the_learning_arithmetic(run, work):
    run("compress", "-m", "tiny-gpt", "--adapt", "--adapt-steps", "8", "a.txt")
    r = run("list", "--json", "a.txt.lmz")
    learning = "exact integer v3 (int8), the window shifted, learning in deterministic float64 v2 (int8 products)"
    assert f'"arithmetic": "{learning}"' in r.stdout
    assert '"adapt": true' in r.stdout and "threads" not in r.stdout
    assert '"adapt_steps": 8' in r.stdout


def test_the_former_option_name_still_works_and_is_not_listed(run, work):
    """--adapt-block was renamed --adapt-steps ("block" is the input block): a hidden alias."""
    r = run("compress", "-m", "tiny-gpt", "--adapt", "--adapt-block", "6", "a.txt")
    assert r.exit_code == 0
    assert '"adapt_steps": 6' in run("list", "--json", "a.txt.lmz").stdout
    assert "--adapt-block" not in run("compress", "--help").stdout


@pytest.mark.parametrize(
    "content, message",
    [(b"", "bad magic"), (b"\x89LMZ\x0d" + bytes(80), "unsupported format version 13"),
     (b"\x89LMZ\x07" + bytes(80), "pre-release lmzip, format 7"),
     (b"plain text", "bad magic")],
)
def test_bad_inputs_leave_no_output(run, work, content, message):
    (work / "bad.lmz").write_bytes(content)
    r = run("decompress", "bad.lmz")
    assert r.exit_code == 1 and message in r.stderr
    assert r.stderr.count("\n") == 1  # one line, no traceback
    assert not (work / "bad").exists()


def test_truncated_and_bit_flipped(run, work):
    blob = run("compress", "-m", "tiny-gpt", "-c", "a.txt").stdout_bytes
    (work / "t.lmz").write_bytes(blob[:-3])
    (work / "f.lmz").write_bytes(blob[:-9] + bytes([blob[-9] ^ 1]) + blob[-8:])
    r = run("decompress", "t.lmz", "f.lmz")
    assert r.exit_code == 1 and "truncated file" in r.stderr and "corrupt data" in r.stderr
    assert sorted(p.name for p in work.iterdir()) == ["a.txt", "f.lmz", "t.lmz"]


def test_missing_model_is_named(run, work, monkeypatch):
    blob = run("compress", "-m", "tiny-gpt", "-c", "a.txt").stdout_bytes
    monkeypatch.setenv("LMZIP_MODELS", str(work / "nowhere"))
    (work / "a.lmz").write_bytes(blob)
    r = run("decompress", "a.lmz")
    assert r.exit_code == 1 and "needs model 'tiny-gpt' (id " in r.stderr and "not installed" in r.stderr
    r = run("compress", "-m", "no-such-model", "a.txt")
    assert r.exit_code == 1 and "unknown model 'no-such-model'" in r.stderr


def test_unreadable_and_missing_inputs(run, work):
    r = run("compress", "-m", "tiny-gpt", "missing.txt")
    assert r.exit_code == 1 and "missing.txt: No such file" in r.stderr
    (work / "d").mkdir()
    r = run("compress", "-m", "tiny-gpt", "d")
    assert r.exit_code == 2 and "is a directory" in r.stderr


def test_interrupt_leaves_no_partial_output(run, work, monkeypatch):
    def boom(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(codec, "_lockstep", boom)
    r = run("compress", "-m", "tiny-gpt", "a.txt")
    assert r.exit_code == 130 and "interrupted" in r.stderr
    assert sorted(p.name for p in work.iterdir()) == ["a.txt"]


def test_refuses_binary_to_a_terminal(run, monkeypatch):
    from lmzip.cli import ui

    monkeypatch.setattr(ui, "stdout_is_terminal", lambda: True)
    r = run("compress", "-m", "tiny-gpt", "-c", "a.txt")
    assert r.exit_code == 1 and "refusing to write compressed data to a terminal" in r.stderr


def test_models_lists_installed(run):
    r = run("models", "--json")
    assert r.exit_code == 0 and '"name": "tiny-gpt"' in r.stdout


def test_verbose_and_mix(run, work, model_frames):
    r = run("compress", "-m", "tiny-gpt", "-v", "--mix", "a.txt")
    assert r.exit_code == 0 and "segments of" in r.stderr and ", mix" in r.stderr and "KB/s" in r.stderr
    (work / "a.txt").unlink()
    assert run("decompress", "-v", "a.txt.lmz").exit_code == 0
    assert (work / "a.txt").read_bytes() == TEXT


def test_seed_needs_adapt_and_a_known_preset(tmp_path):
    src = tmp_path / "a.txt"
    src.write_bytes(b"hello")
    r = CliRunner().invoke(main, ["compress", "--seed", "3", str(src)])
    assert r.exit_code == 1 and "--seed needs --adapt" in r.output
    r = CliRunner().invoke(main, ["compress", "--adapt", "--seed", "3", "-m", "nope", str(src)])
    assert r.exit_code == 1 and "unknown preset 'nope'" in r.output
    assert not (tmp_path / "a.txt.lmz").exists()


def test_learn_from_scratch_round_trips_through_the_cli(tmp_path, monkeypatch):
    from lmzip.coding import parallel, settings

    monkeypatch.setattr(settings, "PARALLEL_FROM", 1)  # an input this size would be split in groups...
    monkeypatch.setattr(parallel, "default_workers", lambda: 4)
    src = tmp_path / "a.txt"
    src.write_bytes(TEXT)
    r = CliRunner().invoke(main, ["compress", "-v", "-m", "lstm-nano", "--adapt", "--seed", "5", str(src)])
    assert r.exit_code == 0, r.output
    assert "random weights seed 5" in r.output
    head = fmt.unpack((tmp_path / "a.txt.lmz").read_bytes())[0]
    # from scratch it defaults to the benchmark's +scratch settings: few long segments, larger steps
    assert (head.adapt_lr, head.adapt_steps) == (pytest.approx(3e-3), 8)
    assert head.segment_length == -(-head.n_tokens // 16)
    assert head.groups == 1  # ...but from scratch one model learns from every segment
    src.unlink()
    r = CliRunner().invoke(main, ["decompress", str(tmp_path / "a.txt.lmz")])
    assert r.exit_code == 0, r.output
    assert src.read_bytes() == TEXT


def test_adapt_settings_need_adapt_and_sane_values(tmp_path):
    src = tmp_path / "a.txt"
    src.write_bytes(b"hello")
    for args, message in ((["--adapt-lr", "1e-3"], "need --adapt"), (["--adapt", "--adapt-steps", "0"], "1..65535"),
                          (["--adapt", "--adapt-lr", "-1"], "--adapt-lr positive")):
        r = CliRunner().invoke(main, ["compress", *args, str(src)])
        assert r.exit_code == 1 and message in r.output, args
    assert not (tmp_path / "a.txt.lmz").exists()


@pytest.mark.skipif("__import__('torch').cuda.is_available()", reason="this machine has a GPU")
def test_a_missing_device_is_one_clear_line(run, work):
    r = run("compress", "-m", "tiny-gpt", "--device", "cuda", "a.txt")
    assert r.exit_code == 1 and "device 'cuda' is not available here" in r.stderr
    assert not (work / "a.txt.lmz").exists()
    run("compress", "-m", "tiny-gpt", "a.txt")
    r = run("decompress", "--device", "cuda", "-c", "a.txt.lmz")
    assert r.exit_code == 1 and "not available here" in r.stderr and "Traceback" not in r.stderr


def test_an_empty_or_path_suffix_is_refused_before_any_work(run, work):
    for suffix in ("", "a/b", ".."):
        r = run("decompress", "-f", "-S", suffix, "a.txt")
        assert r.exit_code == 1 and "invalid suffix" in r.stderr and "Traceback" not in r.output


def test_a_fifo_is_refused_without_force(run, work):
    import os

    os.mkfifo(work / "pipe.lmz")
    os.mkfifo(work / "data")
    for cmd in (["decompress", "pipe.lmz"], ["compress", "data"], ["list", "pipe.lmz"], ["test", "pipe.lmz"]):
        r = run(*cmd)  # reading a FIFO nobody writes to would block forever
        assert r.exit_code != 0 and "not a regular file" in r.stderr, cmd
    assert sorted(p.name for p in work.iterdir()) == ["a.txt", "data", "pipe.lmz"]


def _stored_lmz(path, size: int) -> None:
    """A stored .lmz of ``size`` random bytes (decodes at once, without a model)."""
    import os

    data = os.urandom(size)
    path.write_bytes(fmt.Header(size, fmt.crc32(data), stored=True, payload_length=size).pack() + data)


def test_a_full_disk_on_stdout_is_one_line(work):
    import subprocess
    import sys

    _stored_lmz(work / "a.lmz", 100_000)
    with open("/dev/full", "wb") as full:
        r = subprocess.run([sys.executable, "-m", "lmzip", "decompress", "-c", "a.lmz"], stdout=full,
                           stderr=subprocess.PIPE, text=True, cwd=work)
    assert r.returncode == 1 and r.stderr.strip().splitlines() == [
        "lmzip: standard output: No space left on device"]


def test_blocks_from_the_command_line(run, work):
    """--block-size cuts the input; list counts the blocks, test checks them, -c and stdin stream them."""
    r = run("compress", "-m", "tiny-gpt", "--block-size", "1K", "a.txt")
    assert r.exit_code == 0, r.output
    r = run("list", "--json", "a.txt.lmz")
    assert f'"blocks": {-(-len(TEXT) // 1024)}' in r.stdout and f'"original_bytes": {len(TEXT)}' in r.stdout
    assert run("test", "a.txt.lmz").exit_code == 0
    r = run("decompress", "-c", input=(work / "a.txt.lmz").read_bytes())
    assert r.exit_code == 0 and r.stdout_bytes == TEXT
    r = run("compress", "-m", "tiny-gpt", "--block-size", "3Q", "a.txt")
    assert r.exit_code == 1 and "--block-size" in r.stderr


def test_rm_checks_every_block_before_removing(run, work):
    r = run("compress", "-m", "tiny-gpt", "--block-size", "1K", "--rm", "a.txt")
    assert r.exit_code == 0, r.output
    assert not (work / "a.txt").exists()
    assert run("decompress", "a.txt.lmz").exit_code == 0 and (work / "a.txt").read_bytes() == TEXT
