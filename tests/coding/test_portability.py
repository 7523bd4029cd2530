"""Format 8's promise, tested on one machine: the same counts, the same file and the same bytes back
under every CPU kernel family, oneDNN and MKL instruction set and thread count this machine can
emulate. A child process codes under each setting; the counts the coder saw must match a committed
digest, so a divergence fails even where a round trip would pass by luck.

    python -m tests.coding.test_portability   # rewrite tests/data/counts-digests.json (when the arithmetic changes)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent.parent / "data"
DIGESTS = DATA / "counts-digests.json"
ROOT = Path(__file__).resolve().parents[2]

# every setting of the matrix: environment for the child, its intra-op threads, and whether it decodes every
# committed golden file too. The reference runs in the test process itself, beside the child, on one thread
# with the CPU's best kernels (AVX-512 and AMX where it has them; AVX2 on an AVX2 CPU). The child lowers the
# instruction set of all three kernel libraries at once, torch's own, oneDNN's and MKL's, and runs 2
# threads, which split every parallel reduction unlike 1; so one child covers what eleven processes did,
# and over CI's two CPU classes every ISA level meets the lowest. A divergence names its setting, and
# rerunning that setting's variables one at a time (and its threads apart) says which library caused it.
# (A third setting, AVX2 on 4 threads, ran beside these once: on 2 cores its threads crawled, and the suite
# passed 10 minutes.)
SETTINGS = {
    "reference": (None, 1, False),
    "lowest-isa-threads-2": ({"ATEN_CPU_CAPABILITY": "default", "ONEDNN_MAX_CPU_ISA": "SSE41",
                              "MKL_ENABLE_INSTRUCTIONS": "SSE4_2"}, 2, True),
}

# Run under each setting: code every case, hash every count row the coder saw, decode the file it wrote
# (the same bytes as the reference's wherever the file digests agree) and, if asked, every golden file.
CHILD = "import sys; from tests.coding.test_portability import run_cases; run_cases(*sys.argv[1:])"


def run_cases(threads: str = "1", golden_files: str = "1") -> None:
    """Code every case under this process's setting and print what it saw as one JSON line."""
    print(json.dumps(measure(int(threads), decode=True, golden_files=golden_files == "1")))


def measure(threads: int = 1, decode: bool = False, golden_files: bool = True) -> dict:
    """Code every case: the digest of every count row the coder saw, the file's digest, whether that file
    decodes (``decode``: where its digest is the reference's, this is the reference file decoding under
    this setting) and whether every golden file decodes (``golden_files``)."""
    import hashlib

    import numpy as np

    import lmzip
    from lmzip.coding import codec
    from lmzip.coding import format as fmt
    from lmzip.coding.coder import Encoder
    from lmzip.coding.mix import GroupCoder
    from tests.coding.test_golden import ORIGINAL
    from tests.make_golden import golden_model

    real, mixed, out = Encoder.code, GroupCoder.code, {}
    for key, (data, model, settings) in cases(threads).items():
        h = hashlib.sha256()

        def spy(self, symbols, counts, h=h):
            h.update(counts.astype("<f4").tobytes())
            return real(self, symbols, counts)

        def spy_mixed(self, t, rows, counts, h=h):  # with mix, the counts go to lmzip.coding.mix
            h.update(np.ascontiguousarray(counts).astype("<f4").tobytes())
            return mixed(self, t, rows, counts)

        Encoder.code, GroupCoder.code = spy, spy_mixed
        try:
            blob = codec.encode(data, model, settings, workers=1)[0]
        finally:
            Encoder.code, GroupCoder.code = real, mixed
        row = {"counts": h.hexdigest(), "file": hashlib.sha256(blob).hexdigest()}
        if decode:
            row["decoded"] = codec.decode(*fmt.unpack(blob), model, workers=1) == data
        out[key] = row
    golden: dict[str, bool] = {}
    # formats 9 and 10 changed the container, not the coding, and format 8's arithmetic 3 is format 11's
    # (tests/coding/test_golden.py decodes them all, here): under each setting, the files of arithmetic 1
    # (format 8), the current ones and v10's mix and scratch (the token match model)
    files = sorted(DATA.glob("golden-*-v*.lmz")) if golden_files else []
    for p in (p for p in files if "-v9" not in p.name and "-v8-arith3" not in p.name
              and ("-v10" not in p.name or "-mix-" in p.name or "-scratch-" in p.name)):
        want = (DATA / "golden-crlf.txt").read_bytes() if "-crlf-" in p.name else ORIGINAL
        want = ORIGINAL * 2 if "-mix-" in p.name else want
        arch = p.name.split("-")[1]
        model = golden_model(arch, p.name[len("golden-" + arch) : p.name.rindex("-v")])
        golden[p.name] = lmzip.decompress(p.read_bytes(), model=model, jobs=1) == want
    return {"cases": out, "golden": golden}


def cases(threads: int = 1) -> dict:
    """name -> (input, model, settings): the tiny golden models in every mode, the shipped pair mixed
    (their real widths reach the chunked products and grouped-query heads; 290 tokens re-prime the window)."""
    from dataclasses import replace

    from lmzip.coding.settings import Settings
    from lmzip.models import registry
    from lmzip.models.checkpoint import load_model
    from tests.make_golden import WRITTEN_MIX_LEVEL as MIXED  # the digests were committed for mixed tables of 2

    text = (DATA / "golden.txt").read_bytes()
    alice = (ROOT / "corpora" / "canterbury" / "alice29.txt").read_bytes()[:900]
    out = {}
    for arch in ("gpt", "lstm"):
        model = load_model(DATA / f"golden-{arch}")
        out[f"{arch}-static"] = (text, model, Settings(segment=128, threads=threads))
        out[f"{arch}-mix"] = (text * 2, model, Settings(mix=True, segment=250, threads=threads, mix_level=MIXED))
        out[f"{arch}-groups"] = (text, model, Settings(segment=100, groups=3, threads=threads))
        out[f"{arch}-adapt"] = (text, model, Settings.make(adapt=True, adapt_steps=8, segment=150, threads=threads))
        out[f"{arch}-scratch"] = (text, registry.scratch(f"{arch}-nano", 3),
                                  replace(Settings.make(adapt=True, mix=True, seed=3, segment=300, threads=threads),
                                          mix_level=MIXED))
    for name in ("gpt-wide", "lstm-wide"):
        out[f"{name}-mix"] = (alice, registry.load(name), Settings(mix=True, segment=300, threads=threads,
                                                                   mix_level=MIXED))
        out[f"{name}-adapt"] = (alice[:200], registry.load(name), Settings.make(adapt=True, adapt_steps=16,
                                                                              threads=threads))
    out["counting"] = (alice, None, Settings.make(counting=1, threads=threads))  # lmzip.cm: the file's digest
    out["counting-heavy"] = (alice, None, Settings.make(counting=7, threads=threads))  # levels 7-9's models
    from tests.cm.test_cm import _bitmap  # the image model of cm version 2 at work, and of version 9

    out["counting-image"] = (_bitmap(), None, Settings.make(counting=1, threads=threads))
    out["counting-heavy-image"] = (_bitmap(256, 40), None, Settings.make(counting=7, threads=threads))
    from tests.cm.test_x86 import CODE  # cm version 21's x86 filter

    out["counting-x86"] = (CODE, None, Settings.make(counting=7, threads=threads))
    return out


def start_child(name: str) -> subprocess.Popen:
    """A child process coding every case under setting ``name`` (its JSON line comes on stdout)."""
    env_extra, threads, golden = SETTINGS[name]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), **env_extra}
    args = [sys.executable, "-c", CHILD, str(threads), "1" if golden else "0"]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def child_result(p: subprocess.Popen) -> dict:
    out, err = p.communicate(timeout=900)
    assert p.returncode == 0, err[-2000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def matrix() -> tuple[dict, dict]:
    """Every setting at once: the child starts, the reference codes in this process meanwhile."""
    children = {n: start_child(n) for n in SETTINGS if n != "reference"}
    try:
        results = {"reference": measure(1, golden_files=False)}  # test_golden.py decodes them here
        results.update({n: child_result(p) for n, p in children.items()})
    finally:
        for p in children.values():
            if p.poll() is None:
                p.kill()
    return results, json.loads(DIGESTS.read_text())


@pytest.mark.parametrize("name", list(SETTINGS))
def test_every_setting_gives_the_committed_counts_the_same_file_and_the_bytes_back(matrix, name):
    results, committed = matrix
    got, golden = results[name]["cases"], results[name]["golden"]
    assert all(golden.values()) and bool(golden) == SETTINGS[name][2], f"golden files that fail under {name}: {golden}"
    assert set(got) == set(committed)
    for key, row in got.items():
        assert row["counts"] == committed[key]["counts"], f"{key}: the counts differ under {name}"
        assert row["file"] == committed[key]["file"], f"{key}: a different file under {name}"
        assert row.get("decoded", name == "reference"), f"{key}: the file does not decode under {name}"


@pytest.mark.skipif("not __import__('torch').cuda.is_available()", reason="no GPU here")
def test_a_gpu_gives_the_same_file():
    """The GPU writes the file this project's CPUs write (the committed digest, made on a CPU elsewhere) and
    the file that machine's CPU writes; each decodes on the other."""
    import hashlib
    from dataclasses import replace

    from lmzip.coding import codec
    from lmzip.coding import format as fmt

    committed = json.loads(DIGESTS.read_text())
    for key, (data, model, settings) in cases().items():
        cpu = codec.encode(data, model, settings, workers=1)[0]
        gpu = codec.encode(data, model, replace(settings, device="cuda"), workers=1)[0]
        assert hashlib.sha256(gpu).hexdigest() == committed[key]["file"], key
        assert gpu == cpu, key
        assert codec.decode(*fmt.unpack(cpu), model, workers=1, device="cuda") == data
        assert codec.decode(*fmt.unpack(gpu), model, workers=1) == data


if __name__ == "__main__":
    DIGESTS.write_text(json.dumps(measure(1, golden_files=False)["cases"], indent=1, sort_keys=True) + "\n")
    print(DIGESTS.read_text())
