"""Rebuild lmzip/weights/primers/ from the team's training corpora (../shared/corpora/train; never the bench).

    python benchmarks/make_primers.py [--corpora DIR] [--check]

Each primer takes whole documents (or a stretch from a whole line on) of sources whose licences allow shipping them
(public domain, MIT/Expat, BSD, the Boost and PostgreSQL licences), in the index's order; English books only where
the corpus found no 10-word run of any bench file in them. The same corpora give the same bytes; ``--check`` compares
with the committed primers' SHA-256 (lmzip.cm.primers.PRIMERS) instead of writing.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import lzma
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmzip.cm import primers  # noqa: E402

KB = 1024


def _index(path: Path) -> list[dict]:
    with lzma.open(path, "rt", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _documents(text: bytes, rows: list[dict], keep, cap: int) -> bytes:
    """Whole documents of ``rows`` that ``keep`` accepts, in order, up to ``cap`` bytes (the last one cut)."""
    out = bytearray()
    for r in rows:
        if len(out) >= cap:
            break
        if keep(r):
            start = int(r["offset"])
            out += text[start : start + int(r["bytes"])] + b"\n"
    return bytes(out[:cap])


def _stretch(text: bytes, start: int, cap: int) -> bytes:
    """``cap`` bytes of ``text`` from the first whole line at or after ``start``."""
    start = text.index(b"\n", start) + 1
    return text[start : start + cap]


def text_primer(corpora: Path) -> bytes:
    """Primer 1: English prose (two books), C-like code, Lisp, JavaScript and HTML; 256 KiB."""
    books = corpora / "en" / "gutenberg_train.txt"
    with open(corpora / "en" / "gutenberg_index.tsv", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t")
                if r["split"] == "train" and r["bench_10gram_hits"] == "0" and int(r["bytes"]) > 256 * KB]
    prose = b""
    with open(books, "rb") as f:
        for r in (rows[0], rows[len(rows) // 2]):  # two authors' books, a third of the way in
            f.seek(int(r["offset"]))
            book = f.read(int(r["bytes"]))
            prose += _stretch(book, len(book) // 3, 32 * KB)
    mixed = corpora / "mixed"
    code, code_rows = lzma.open(mixed / "code_train.txt.xz").read(), _index(mixed / "code_index.tsv.xz")
    lang = [("go", "Go"), ("cpp", "BSL-1.0"), ("common-lisp", "public-domain"), ("javascript", "Expat")]
    parts = [_documents(code, code_rows, lambda r, g=g, lic=lic: r["language_or_format"] == g and r["licence"] == lic,
                        32 * KB) for g, lic in lang]
    markup, markup_rows = lzma.open(mixed / "markup_train.txt.xz").read(), _index(mixed / "markup_index.tsv.xz")
    html = _documents(markup, markup_rows, lambda r: r["language_or_format"] == "html"
                      and r["licence"] in ("PostgreSQL", "Expat"), 64 * KB)
    return prose + b"".join(parts) + html


def prose_primer(corpora: Path, kind: str) -> bytes:
    """Primers 2-4: 256 KiB of a public-domain prose kind (zh, ja, ru), from a third of the way in."""
    text = lzma.open(corpora / "mixed" / f"{kind}_train.txt.xz").read()
    return _stretch(text, len(text) // 3, 256 * KB)


BUILDERS = {"text.txt.xz": text_primer}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", type=Path, default=ROOT.parent / "shared" / "corpora" / "train")
    ap.add_argument("--check", action="store_true", help="compare with the committed primers, write nothing")
    args = ap.parse_args()
    bad = 0
    for number, (name, digest) in primers.PRIMERS.items():
        kind = name.split(".")[0]
        data = BUILDERS[name](args.corpora) if name in BUILDERS else prose_primer(args.corpora, kind)
        got = hashlib.sha256(data).hexdigest()
        print(f"primer {number} {name}: {len(data):,} bytes, sha256 {got}")
        if args.check:
            bad += got != digest
        else:
            (primers.FOLDER / name).write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
