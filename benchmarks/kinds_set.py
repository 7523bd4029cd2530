"""Make the kinds set: 100 KB of every kind of input a user may hand lmzip, beside the 42 bench files.

Real text from the held-out validation files of ``../shared/corpora/train/mixed/`` (Russian, Chinese,
Japanese, European prose, code, markup) and English prose (``train/en``'s validation file), and
generated inputs that no corpus has: a table (CSV of seeded numbers and words), an x86-64 binary
(torch 2.13.0's libc10.so: the pinned wheel's, so alike on every machine), zeros, random bytes and UTF-16 text (the
European sample re-encoded). Every file is cut to 100,000 bytes at a line end where it has lines.
The set is data a script remakes, so it stays out of git; its manifest (names, sizes, sha256, where
each came from) is written beside it and to benchmarks/results/kinds-set.json, so runs can be compared.

    .venv/bin/python benchmarks/kinds_set.py [--out benchmarks/kinds-set]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import lzma
import random
from pathlib import Path

from common import RESULTS, ROOT, TRAINING

SIZE = 100_000
TORCH = "2.13.0"
TEXTS = {"ru": "ru", "zh": "zh", "ja": "ja", "eu": "eu", "code": "code", "markup": "markup"}


def _cut(data: bytes) -> bytes:
    """The first SIZE bytes, cut back to a line end where there is one in the last tenth."""
    data = data[:SIZE]
    end = data.rfind(b"\n")
    return data[: end + 1] if end > SIZE * 9 // 10 else data


def _valid(kind: str) -> bytes:
    with lzma.open(TRAINING / "mixed" / f"{kind}_valid.txt.xz") as f:
        return f.read(2 * SIZE)


def _table() -> bytes:
    """A CSV of seeded records: ids, dates, prices, counts, codes and a few words (a spreadsheet export)."""
    rnd = random.Random(36)
    words = ["north", "south", "east", "west", "alpha", "beta", "gamma", "delta", "red", "green", "blue"]
    rows = ["id,date,region,product,price,quantity,total,code"]
    i = 0
    while sum(len(r) + 1 for r in rows) < SIZE + 200:
        i += 1
        price, qty = rnd.randrange(100, 100_000) / 100, rnd.randrange(1, 500)
        rows.append(f"{i},2026-{rnd.randrange(1, 13):02d}-{rnd.randrange(1, 29):02d},{rnd.choice(words)},"
                    f"{rnd.choice(words)}-{rnd.randrange(1000)},{price:.2f},{qty},{price * qty:.2f},"
                    f"{rnd.choice('ABCDEFGH')}{rnd.randrange(10**5):05d}")
    return "\n".join(rows).encode() + b"\n"


def sources() -> dict[str, tuple[str, bytes]]:
    """Every kind: (where it came from, its bytes)."""
    out = {kind: (f"train/mixed/{name}_valid.txt.xz", _valid(name)) for kind, name in TEXTS.items()}
    out["en"] = ("train/en/gutenberg_valid.txt", (TRAINING / "en" / "gutenberg_valid.txt").read_bytes()[: 2 * SIZE])
    out["table"] = ("generated: seeded CSV records (random.Random(36))", _table())
    lib = Path(importlib.util.find_spec("torch").origin).parent / "lib" / "libc10.so"  # the pinned wheel: alike
    out["x86"] = (f"torch {TORCH}'s lib/libc10.so (ELF x86-64 code), from byte 65536", lib.read_bytes()[65536:])
    out["zeros"] = ("generated: zero bytes", bytes(SIZE))
    out["random"] = ("generated: random.Random(36).randbytes", random.Random(36).randbytes(SIZE))
    out["utf16"] = ("the eu sample in UTF-16 LE with a byte-order mark",
                    b"\xff\xfe" + _valid("eu").decode("utf-8", "ignore")[: SIZE // 2].encode("utf-16-le"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "kinds-set"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for kind, (origin, data) in sources().items():
        data = _cut(data) if kind not in ("zeros", "random", "x86") else data[:SIZE]
        (out / kind).write_bytes(data)
        manifest.append({"file": kind, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                         "from": origin})
        print(f"{kind:8s} {len(data):7,d}  {origin}")
    text = json.dumps({"size": SIZE, "files": manifest}, indent=1) + "\n"
    (out / "MANIFEST.json").write_text(text)
    (RESULTS / "kinds-set.json").write_text(text)


if __name__ == "__main__":
    main()
