"""Fuzz the decoder with mutants of the golden files of every mode; count each outcome.

    .venv/bin/python benchmarks/fuzz.py --mutants 100000 --out benchmarks/results/fuzz.json

The files: every golden file of the current format (model frames, mixed frames, blocks, learning while
coding), the counting golden files (short frames 13, 12 and 10, ordinary counting frames of cm versions 1 and 2)
and concatenations (``A+B``: the two files one after the other, as ``cat`` makes them).
Each mutant is a golden file with bits flipped, cut short, bytes overwritten, or one header field set
to a hostile value with the header CRC recomputed (a crafted file). Mutant i is a pure function of
(--seed, i), so any mutant can be rebuilt. Outcomes: clean (one LmzipError: what the CLI prints as
one line), harmless (the mutation changed nothing that matters: the original bytes came back),
traceback (any other exception), hang (over 10x the file's normal decode time, plus 2 s), over 2 GB
(peak RSS), a whole file (a concatenation cut exactly where one of its files ends: a complete file,
which decodes to the files before the cut, as with gzip), silent (other bytes returned without an
error: the worst). Every mutant of the last three kinds is listed in the result with its index.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import struct
import sys
import time
import zlib
from collections import Counter
from multiprocessing import get_context
from pathlib import Path

from common import RESULTS, ROOT, peak_mib, write_json

DATA = ROOT / "tests" / "data"  # the golden files (data: read, never imported)
LIMIT_MIB = 2048
KINDS = ["flip", "flip-header", "truncate", "overwrite", "craft"]
HOSTILE = [0, 1, 2, 3, 255, 2**16 - 1, 2**24, 10**6, 2**31 - 1, 2**32 - 1, 2**40, 2**63 - 1, 2**64 - 1]


COUNTED = ["counted-v13.lmz", "counted-blocks-v11-cm2.lmz", "counted-v12.lmz", "counted-v10.lmz",
           "counted-frame-v10.lmz", "counted-v12.lmz+counted-v12.lmz", "counted-v10.lmz+counted-v12.lmz",
           "counted-v13.lmz+counted-v12.lmz", "golden-gpt-mix-v11-arith3.lmz+counted-v12.lmz",
           "golden-lstm-blocks-v11-arith3.lmz+golden-lstm-v11-arith3.lmz"]


class Hang(Exception):
    """The decoder ran past its time cap."""


def mutate(blob: bytes, header_size: int, seed: int, i: int) -> tuple[str, bytes]:
    """Mutant ``i`` of ``blob``: its kind and its bytes."""
    import numpy as np

    from lmzip.coding import format as fmt

    rng = np.random.default_rng([seed, i])
    kind = KINDS[i % len(KINDS)]
    b = bytearray(blob)
    if kind == "flip":
        for _ in range(int(rng.integers(1, 4))):
            pos = int(rng.integers(len(b)))
            b[pos] ^= 1 << int(rng.integers(8))
    elif kind == "flip-header":
        pos = int(rng.integers(header_size))
        b[pos] ^= 1 << int(rng.integers(8))
    elif kind == "truncate":
        b = b[: int(rng.integers(len(b)))]
    elif kind == "overwrite":
        pos, n = int(rng.integers(len(b))), int(rng.integers(1, 17))
        b[pos : pos + n] = rng.integers(0, 256, size=len(b[pos : pos + n]), dtype=np.uint8).tobytes()
    elif blob[:4] == fmt.SHORT_MAGIC:  # craft a short frame: one header byte hostile, its CRC made right again
        pos = int(rng.integers(4, header_size - 4))
        b[pos] = HOSTILE[int(rng.integers(len(HOSTILE)))] & 0xFF if rng.random() < 0.5 else int(rng.integers(256))
        end = header_size - 4
        b[end : end + 4] = struct.pack("<I", zlib.crc32(bytes(b[:end])))
    else:  # craft: one field hostile, the header CRC made right again
        fields = dict(fmt.FIELDS)
        if b[4] >= 9:  # the block number and size follow the model name
            fields.update(block=(62 + b[61], "<I"), block_size=(66 + b[61], "<I"))
        name = list(fields)[int(rng.integers(len(fields)))]
        off, f = fields[name]
        bits = 8 * struct.calcsize(f)
        value = HOSTILE[int(rng.integers(len(HOSTILE)))] % (1 << bits)
        if rng.random() < 0.5:  # or a near neighbour of the true value
            value = (struct.unpack_from(f, b, off)[0] + int(rng.integers(-3, 4))) % (1 << bits)
        struct.pack_into(f, b, off, value)
        end = header_size - 4
        b[end : end + 4] = struct.pack("<I", zlib.crc32(bytes(b[:end])))
    return kind, bytes(b)


def _alarm(signum, frame):
    raise Hang()


def golden_model(name: str):
    """The model golden file ``name`` was written with: the tiny golden model saved beside it in tests/data, or
    for learning from scratch the seeded random weights of the preset its header names."""
    from lmzip.coding import format as fmt
    from lmzip.models import registry
    from lmzip.models.checkpoint import load_model

    head = fmt.parse_header((DATA / name).read_bytes())
    if head.seed is not None:
        return registry.scratch(head.model_name, head.seed)
    return load_model(DATA / f"golden-{name.split('-')[1]}")


_FILES: dict = {}
_WHOLE: dict = {}  # (file, a prefix of it that is a whole file) -> what that prefix decodes to


def _init(names: list[str]) -> None:
    # one core per worker: lmzip's default threads follow the cores a process may use, and two
    # workers each running two threads on two cores made 0.05 s decodes take seconds (OpenMP spin)
    from multiprocessing import current_process

    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cores[(current_process()._identity or (1,))[0] % len(cores)]})
    import lmzip
    from lmzip.coding import format as fmt

    signal.signal(signal.SIGALRM, _alarm)
    for name in names:
        parts = name.split("+")
        blob = b"".join((DATA / part).read_bytes() for part in parts)
        head = fmt.parse_header(blob)  # the first block's
        model = None  # counting frames need none; a golden file's model decodes the rest
        for part in (p for p in parts if p.startswith("golden-")):
            model = golden_model(part)
        t0 = time.perf_counter()
        original = lmzip.decompress(blob, model=model, jobs=1)
        _FILES[name] = (blob, head.size, model, original, time.perf_counter() - t0)
        # a concatenation cut exactly after its first files is itself a whole file: the bytes of those
        prefix = b""
        for part in parts[:-1]:
            prefix += (DATA / part).read_bytes()
            _WHOLE[(name, prefix)] = lmzip.decompress(prefix, model=model, jobs=1)


_WARM: set[int] = set()


def _warm(m: bytes) -> None:
    """Load the compiled counting loop of the level a mutant's header names before it is timed: each table
    size is its own compiled specialization, whose first load (1-4 s) is not decoding; a mutant that
    names another level than its file's would otherwise count as a hang."""
    import lmzip
    from lmzip.coding import format as fmt
    from lmzip.errors import LmzipError

    try:
        head = fmt.parse_header(m)
    except LmzipError:
        return
    level = int(head.model_name[3:]) if head.counting and head.model_name[3:].isdigit() else None
    if level is not None and level not in _WARM:
        _WARM.add(level)
        lmzip.decompress(lmzip.compress(b"warm " * 64, model=f"cm-{level}"))


def run_one(job: tuple[str, int, int]) -> tuple[str, str, str, int, str]:
    """Decode one mutant; returns (file, kind, outcome, index, detail)."""
    import lmzip
    from lmzip.errors import LmzipError

    name, seed, i = job
    blob, header_size, model, original, secs = _FILES[name]
    kind, m = mutate(blob, header_size, seed, i)
    _warm(m)
    cap = 10 * secs + 2
    signal.setitimer(signal.ITIMER_REAL, cap)
    detail = ""
    try:
        out = lmzip.decompress(m, model=model, jobs=1)
        outcome = "harmless" if out == original else "silent"
        if outcome == "silent" and _WHOLE.get((name, m)) == out:
            outcome = "a whole file"  # cut at a file's end: the files before the cut, rightly decoded
    except Hang:
        outcome = "hang"
    except LmzipError:
        outcome = "clean"
    except MemoryError:
        outcome = "over 2 GB"
    except Exception as e:  # noqa: BLE001 - counting what escapes is the point
        outcome, detail = "traceback", f"{type(e).__name__}: {e}"[:200]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if peak_mib() > LIMIT_MIB and outcome != "over 2 GB":
        outcome, detail = "over 2 GB", outcome
    return name, kind, outcome, i, detail


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutants", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--files", help="golden files (comma-separated; default every golden file of this format version)")
    ap.add_argument("--out", default=str(RESULTS / "fuzz.json"))
    args = ap.parse_args()
    from lmzip.coding.format import VERSION

    names = args.files.split(",") if args.files else [*sorted(p.name for p in DATA.glob(f"golden-*-v{VERSION}*.lmz")),
                                                      *COUNTED]
    jobs = [(names[i % len(names)], args.seed, i) for i in range(args.mutants)]
    t0 = time.time()
    counts: dict[str, Counter] = {n: Counter() for n in names}
    by_kind: dict[str, Counter] = {k: Counter() for k in KINDS}
    bad = []
    ctx = get_context("spawn")
    # workers are replaced every 2,000 mutants: peak RSS is per process and only grows
    with ctx.Pool(args.jobs, initializer=_init, initargs=(names,), maxtasksperchild=2000) as pool:
        for done, (name, kind, outcome, i, detail) in enumerate(pool.imap_unordered(run_one, jobs, chunksize=50), 1):
            counts[name][outcome] += 1
            by_kind[kind][outcome] += 1
            if outcome not in ("clean", "harmless", "a whole file"):
                bad.append({"file": name, "kind": kind, "outcome": outcome, "mutant": i, "detail": detail})
            if done % 5000 == 0:
                print(f"{done:,} mutants, {time.time() - t0:.0f} s, {len(bad)} not clean", flush=True)
    total = Counter()
    for c in counts.values():
        total.update(c)
    result = {"command": "python benchmarks/fuzz.py " + " ".join(sys.argv[1:]), "mutants": args.mutants,
              "seed": args.seed, "seconds": round(time.time() - t0), "outcomes": dict(total),
              "by_file": {n: dict(c) for n, c in counts.items()}, "by_kind": {k: dict(c) for k, c in by_kind.items()},
              "not_clean": bad[:200]}
    write_json(Path(args.out), result)
    print(json.dumps(result["outcomes"]))


if __name__ == "__main__":
    main()
