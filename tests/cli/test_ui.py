"""The thin CLI's shared parts: each command's own help, the one error/interrupt wrapper, -v from the header
record, and progress that shows only on a terminal (and never with -q or --no-progress)."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

from lmzip.cli import ui
from lmzip.cli.main import main
from lmzip.cli.views import header_record, layout_line
from lmzip.coding import format as fmt
from lmzip.errors import LmzipError
from lmzip.models import registry
from tests.conftest import TEXT

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden-gpt"
BAR = "━"  # what rich draws a bar with


def run(*args, input=None):
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


class Screen(io.StringIO):
    """What a terminal was sent, and that text without its escape sequences."""

    def text(self) -> str:
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", self.getvalue())

    def clear(self) -> None:
        self.truncate(0)
        self.seek(0)


@pytest.fixture()
def terminal(monkeypatch):
    """stderr as a terminal 100 columns wide; returns the Screen it writes to."""
    screen = Screen()
    monkeypatch.setattr(ui, "err", Console(file=screen, force_terminal=True, width=100, soft_wrap=True))
    return screen


def options(command: str) -> set[str]:
    """The options a command's --help lists (former names kept as hidden aliases are not)."""
    return {o for p in main.commands[command].params if isinstance(p, click.Option) and not p.hidden for o in p.opts}


# --- help: each command's own words ---

def test_decompress_help_has_no_compress_only_text():
    r = run("decompress", "--help")
    assert r.exit_code == 0
    text = " ".join(r.output.split())  # click wraps lines
    for compress_only in ("compress:", registry.DEFAULT_MODEL, "round trip", "coding segment groups",
                          "follow from the input size", "Level", "--mix", "--adapt", "--segment", "--block-size"):
        assert compress_only not in text, compress_only
    assert "decode with" in text and "--device" in text and "--no-progress" in text
    assert options("decompress") == {"-c", "--stdout", "-o", "--output", "-f", "--force", "-k", "--keep", "--rm",
                                     "-S", "--suffix", "-m", "--model", "--device", "-j", "--jobs", "-v",
                                     "--verbose", "-q", "--quiet", "--no-progress", "--threads", "--ray"}


def test_compress_help_is_unchanged_in_substance():
    r = run("compress", "--help")
    text = " ".join(r.output.split())
    assert options("compress") == {"-c", "--stdout", "-o", "--output", "-f", "--force", "-k", "--keep", "--rm",
                                   "-S", "--suffix", "-m", "--model", "--device", "-j", "--jobs", "-v",
                                   "--verbose", "-q", "--quiet", "--no-progress", "--threads", "--ray", "--segment",
                                   "--mix", "--adapt", "--adapt-lr", "--adapt-steps", "--seed", "--block-size",
                                   *(f"-{n}" for n in range(1, 10))}
    for said in ("Delete the input after a verified round trip.", f"default: {registry.DEFAULT_MODEL}",
                 "Segment groups coded at once, in threads", "the bytes never depend on it",
                 "Level 9:", "[default: .lmz]", "No progress bar, even on a terminal."):
        assert said in text, said
    assert "compress:" not in text  # the "which command" hint is gone: the help is the command's


@pytest.mark.parametrize("command", ["compress", "decompress", "test", "train", "explain"])
def test_every_long_running_command_takes_no_progress(command):
    assert "--no-progress" in options(command)


# --- one wrapper for errors, Ctrl-C and a closed pipe ---

def _guarded(exc: BaseException, **kw) -> click.Command:
    @click.command()
    @ui.guard(**kw)
    def cmd() -> None:
        raise exc

    return cmd


def test_guard_turns_errors_and_interrupts_into_one_line():
    r = CliRunner().invoke(_guarded(LmzipError("it broke")))
    assert (r.exit_code, r.stderr) == (1, "lmzip: it broke\n")
    r = CliRunner().invoke(_guarded(KeyboardInterrupt()))
    assert (r.exit_code, r.stderr) == (130, "lmzip: interrupted\n")
    r = CliRunner().invoke(_guarded(KeyboardInterrupt(), interrupted="interrupted; try again"))
    assert (r.exit_code, r.stderr) == (130, "lmzip: interrupted; try again\n")
    r = CliRunner().invoke(_guarded(BrokenPipeError()))
    assert (r.exit_code, r.stderr) == (1, "")  # the reader went away: nothing to say


# A KeyboardInterrupt raised in code a C extension runs through PyRun_String (as torch's import does) marks
# it unhandled in CPython even once caught; `python -m` then kills itself with SIGINT at exit.
_CAUGHT_IN_C = """import ctypes, sys
from lmzip.cli import ui
run = ctypes.pythonapi.PyRun_String
run.restype, run.argtypes = ctypes.py_object, [ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object]
try:
    run(b"raise KeyboardInterrupt", 257, {}, {})
except KeyboardInterrupt:
    pass
if sys.argv[1:] == ["program"]:
    ui.as_program(lambda: sys.exit(ui.INTERRUPTED))
sys.exit(ui.INTERRUPTED)
"""


def test_an_interrupted_program_exits_130_where_python_would_kill_itself_with_sigint(tmp_path):
    """Ctrl-C while torch was being imported: the one line printed, then status -2 instead of 130 (a clean
    clone's test run saw it); as_program, the entry of `lmzip`, `python -m lmzip` and the aliases, leaves with 130."""
    (tmp_path / "caught_in_c").mkdir()
    (tmp_path / "caught_in_c" / "__main__.py").write_text(_CAUGHT_IN_C)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(Path(ui.__file__).parents[2])])}
    status = {how: subprocess.run([sys.executable, "-m", "caught_in_c", how], env=env, cwd=tmp_path).returncode
              for how in ("plain", "program")}
    assert status["program"] == 130
    assert status["plain"] in (-2, 130)  # -2 in CPython 3.11 (the hazard this guards against), 130 once mended


def test_an_interrupted_train_says_how_to_resume(work, monkeypatch):
    from lmzip.models import train

    def stopped(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "train", stopped)
    r = run("train", "--preset", "gpt-nano", "--data", "a.txt", "--out", "run")
    assert r.exit_code == 130
    assert r.stderr == "lmzip: interrupted; resume with the same command (the last checkpoint is kept)\n"


def test_explain_errors_are_one_line(work):
    r = run("explain", "-m", "no-such-model", "a.txt")
    assert r.exit_code == 1 and r.stderr.startswith("lmzip: ") and r.stderr.count("\n") == 1


def test_contradictory_outputs_are_refused_before_any_work(work):
    r = run("compress", "-m", "tiny-gpt", "-c", "-o", "x.lmz", "a.txt")
    assert r.exit_code == 1 and r.stderr == "lmzip: -o and -c cannot be used together\n"
    assert sorted(p.name for p in work.iterdir()) == ["a.txt"]


def test_a_missing_input_among_several_is_reported_and_the_others_done(work):
    (work / "b.txt").write_bytes(b"bbb" * 50)
    r = run("compress", "-m", "tiny-gpt", "-q", "a.txt", "missing.txt", "b.txt")
    assert r.exit_code == 1 and r.stderr == "lmzip: missing.txt: No such file or directory\n"
    assert (work / "a.txt.lmz").exists() and (work / "b.txt.lmz").exists()


# --- -v: the header record, in one line ---

def test_verbose_prints_the_header_record(work):
    r = run("compress", "-m", "tiny-gpt", "-v", "--mix", "--block-size", "1K", "a.txt")
    assert r.exit_code == 0, r.output
    blob = (work / "a.txt.lmz").read_bytes()
    heads = [h for h, _ in fmt.read_frames(io.BytesIO(blob))]
    line = layout_line(header_record("a.txt", len(blob), heads))
    assert f"\n  {line}; " in r.stderr and "KB/s" in r.stderr
    assert "mix" in line and "blocks of up to 1.0 KiB" in line and "segments of" in line
    r = run("decompress", "-v", "-c", "a.txt.lmz")
    assert r.exit_code == 0 and f"  {line}; " in r.stderr


# --- progress: only on a terminal, never with -q or --no-progress ---

def test_no_progress_is_printed_off_a_terminal(work):
    r = run("compress", "-m", "tiny-gpt", "a.txt")
    assert r.exit_code == 0 and r.stderr.count("\n") == 1 and BAR not in r.stderr
    for args in (["compress", "-f", "--no-progress"], ["decompress", "-c", "--no-progress"],
                 ["test", "--no-progress"]):
        name = "a.txt" if args[0] == "compress" else "a.txt.lmz"
        r = run(*args, *(["-m", "tiny-gpt"] if args[0] == "compress" else []), name)
        assert r.exit_code == 0, (args, r.output)
        assert BAR not in r.stderr and "bytes" not in r.stderr


def test_compress_shows_a_bar_on_a_terminal_unless_told_not_to(work, terminal):
    assert run("compress", "-m", "tiny-gpt", "-c", "a.txt").exit_code == 0
    assert BAR in terminal.text() and "compress" in terminal.text()
    for quiet in (["--no-progress"], ["-q"]):
        terminal.clear()
        assert run("compress", "-m", "tiny-gpt", "-c", *quiet, "a.txt").exit_code == 0
        assert BAR not in terminal.text(), quiet


def _pty_stderr(args: list[str], cwd: Path) -> str:
    """Run ``python -m lmzip ARGS`` with stderr a pseudo-terminal; what it wrote there."""
    import pty

    parent, child = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("TTY_INTERACTIVE", "TTY_COMPATIBLE", "NO_COLOR")}
    env.update(TERM="xterm", COLUMNS="100", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    p = subprocess.Popen([sys.executable, "-m", "lmzip", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=child, env=env)
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(parent, 1 << 16)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(parent)
    assert p.wait(timeout=120) == 0
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_a_real_terminal_sees_the_bar_and_no_progress_hides_it(tmp_path):
    (tmp_path / "a.txt").write_bytes(TEXT)
    shown = _pty_stderr(["compress", "-m", str(GOLDEN), "-f", "a.txt"], tmp_path)
    assert "compress" in shown and BAR in shown and "a.txt: " in shown
    hidden = _pty_stderr(["compress", "-m", str(GOLDEN), "-f", "--no-progress", "a.txt"], tmp_path)
    assert BAR not in hidden and "\x1b[" not in hidden and "a.txt: " in hidden


def test_the_bar_says_when_a_loop_is_being_compiled(monkeypatch):
    """A loop's first run on a machine compiles it (a minute or two, silent before): the bar's label says so from
    the compile's start until the coding reports progress again."""
    from numba import njit

    buf = io.StringIO()
    monkeypatch.setattr(ui, "err", Console(file=buf, force_terminal=True, width=120))

    @njit(cache=False)
    def fresh(n):  # compiled on its first call, here, inside the bar
        return n * 3 + 1

    with ui.progress("compress", True) as update:
        update(1, 4)
        assert fresh(4) == 13
        update(2, 4)
        assert fresh(5) == 16  # compiled already: the label is not changed again
    shown = buf.getvalue()
    after = shown[shown.rindex("compress" + ui.COMPILING) + len("compress" + ui.COMPILING):]
    assert "compress" in after.replace("compress" + ui.COMPILING, "")  # progress again: the plain label is back
    buf.truncate(0)
    with ui.progress("compress", True) as update:
        update(1, 4)
        assert fresh(6) == 19
    assert ui.COMPILING not in buf.getvalue()


def _fake_train(steps_seen: list):
    def train(cfg, tok, on_log):
        for step in range(1, cfg.steps + 1):
            rec = {"step": step, "loss": 2.0, "lr": 1e-3, "tokens_per_s": 1234.0}
            if step == cfg.steps:
                rec["valid_bpb"] = 1.5
            steps_seen.append(step)
            if on_log:
                on_log(rec)
        out = Path(cfg.out) / "model"
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps({"id": "ab" * 16, "training": {"valid_bpb": 1.5}}))
        return out

    return train


@pytest.fixture()
def fake_train(work, monkeypatch):
    from lmzip.models import train

    seen: list = []
    monkeypatch.setattr(train, "train", _fake_train(seen))
    return lambda *extra: run("train", "--preset", "gpt-nano", "--data", "a.txt", "--out", "run", "--steps", "120",
                              *extra)


def test_train_logs_lines_with_an_eta_off_a_terminal(fake_train):
    r = fake_train()
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert [x.split()[1] for x in lines if x.startswith("step ")] == ["50/120", "100/120", "120/120"]
    assert "1,234 tok/s" in lines[0] and "ETA 0:00:00" in lines[0] and "valid 1.500 bpb" in lines[2]
    assert lines[-1].startswith("model written to run/model (id abababababab")
    r = fake_train("-q")
    assert r.exit_code == 0 and "step" not in r.stderr and BAR not in r.stderr


def test_train_draws_a_bar_on_a_terminal(fake_train, terminal):
    assert fake_train().exit_code == 0
    shown = terminal.text()
    assert BAR in shown and "120/120 steps" in shown and "1,234 tok/s" in shown and "loss 2.000" in shown
    assert "step 50/120" not in shown and "step 120/120  loss 2.000  valid 1.500 bpb" in shown
    terminal.clear()
    assert fake_train("--no-progress").exit_code == 0  # a terminal still gets the log lines
    assert BAR not in terminal.text() and "step 50/120" in terminal.text()


def test_explain_draws_a_bar_on_a_terminal(work, terminal):
    r = run("explain", "-m", "tiny-gpt", "--max-bytes", "0", "a.txt")
    assert r.exit_code == 0, r.output
    assert BAR in terminal.text() and "explain tiny-gpt" in terminal.text() and "tokens" in terminal.text()
    terminal.clear()
    r = run("explain", "-m", "tiny-gpt", "--max-bytes", "0", "--no-progress", "a.txt")
    assert r.exit_code == 0 and terminal.text() == "" and "bits per byte" in r.stdout
