"""Make the bilevel set: 1-bit images of the kinds a fax or a scanner writes, beside the bench's one (calgary/pic),
so a change to counting's image model is judged on pages it was not tuned on.

Four raw bitmaps (one bit a pixel, the first pixel in the high bit, 1 = black, rows packed with no header, as
pic is): English prose from the held-out ``train/en`` validation file set in Pillow's own font on a 1728-pixel
fax row and, smaller, on an 800-pixel row; a seeded line drawing (lines, boxes, circles) 1200 pixels wide; a smooth
seeded field, Floyd-Steinberg dithered, 1024 wide. Data a script remakes, so out of git; the manifest (names,
sizes, sha256) is written beside it. ``--measure`` codes the set and calgary/pic at one cm level in two cm
versions (one process, each file alone) and writes results/bilevel.json and .md.

    .venv/bin/python benchmarks/bilevel_set.py [--out benchmarks/bilevel-set]
    .venv/bin/python benchmarks/bilevel_set.py --measure [--level 8 --versions 7 8]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

import numpy as np
from common import BENCH, RESULTS, ROOT, TRAINING, write_json, write_md
from PIL import Image, ImageDraw, ImageFont


def _bits(img: Image.Image) -> bytes:
    """A mode-1 image as pic stores it: 1 = black."""
    return bytes(255 - b for b in img.convert("1").tobytes())


def _page(width: int, height: int, size: int, text: str) -> bytes:
    """Prose set in Pillow's font, ragged right, black on white, no anti-aliasing."""
    img = Image.new("1", (width, height), 1)
    draw = ImageDraw.Draw(img)
    draw.fontmode = "1"
    font = ImageFont.load_default(size=size)
    words, y, margin = text.split(), size * 3, width // 12
    line = ""
    while words and y < height - size * 3:
        word = words.pop(0)
        if draw.textlength(f"{line} {word}", font=font) > width - 2 * margin and line:
            draw.text((margin, y), line, font=font, fill=0)
            line, y = word, y + size * 3 // 2
        else:
            line = f"{line} {word}".strip()
    return _bits(img)


def _drawing(width: int, height: int, seed: int) -> bytes:
    """A seeded line drawing: straight lines, boxes and circles of a few widths."""
    rng = random.Random(seed)
    img = Image.new("1", (width, height), 1)
    draw = ImageDraw.Draw(img)
    for _ in range(120):
        x0, y0 = rng.randrange(width), rng.randrange(height)
        x1, y1 = x0 + rng.randrange(-300, 300), y0 + rng.randrange(-300, 300)
        kind, w = rng.randrange(3), rng.choice((1, 1, 2, 3))
        box = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
        if kind == 0:
            draw.line((x0, y0, x1, y1), fill=0, width=w)
        elif kind == 1:
            draw.rectangle(box, outline=0, width=w)
        else:
            draw.ellipse(box, outline=0, width=w)
    return _bits(img)


def _dither(width: int, height: int, seed: int) -> bytes:
    """A smooth seeded field of greys, Floyd-Steinberg dithered to one bit."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width] / max(width, height)
    field = np.zeros((height, width))
    for _ in range(12):
        fx, fy, ph = rng.uniform(1, 9), rng.uniform(1, 9), rng.uniform(0, 6.3)
        field += np.sin(2 * np.pi * (fx * xx + fy * yy) + ph)
    grey = ((field - field.min()) / (field.max() - field.min()) * 255).astype(np.uint8)
    return _bits(Image.fromarray(grey, "L"))


def build(out: Path) -> list[dict]:
    """Write the set to ``out``; returns its manifest."""
    text = (TRAINING / "en" / "gutenberg_valid.txt").read_bytes()[:400_000].decode("utf-8", "replace")
    half = len(text) // 2
    files = {"fax-prose": _page(1728, 1400, 22, text[:half]), "page-800": _page(800, 1500, 13, text[half:]),
             "drawing": _drawing(1200, 1000, 7), "dither": _dither(1024, 1024, 7)}
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for name, data in files.items():
        (out / name).write_bytes(data)
        manifest.append({"file": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        print(f"{name:10s} {len(data):8,d}")
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def measure(folder: Path, level: int, versions: list[int]) -> None:
    """Each file's cm payload at ``level`` in each cm version, bits per byte and seconds; the table."""
    import time

    from lmzip import cm

    files = [("calgary/pic (bench)", (BENCH / "calgary" / "pic").read_bytes())]
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    files += [(e["file"], (folder / e["file"]).read_bytes()) for e in manifest]
    rows: dict = {}
    for v in versions:
        cm.compress(b"the compiled loop, loaded first " * 8, level, version=v)
        for name, data in files:
            t0 = time.perf_counter()
            size = len(cm.compress(data, level, version=v))
            rows.setdefault(name, {"bytes": len(data)})[v] = [size, round(time.perf_counter() - t0, 2)]
            print(f"v{v} {name:20s} {len(data):8,d} {size:8,d}", flush=True)
    write_json(RESULTS / "bilevel.json", {"level": level, "versions": versions, "set": manifest, "files": rows})
    head = " | ".join(f"cm version {v}: bytes (bpb), s" for v in versions)
    lines = [f"1-bit images (benchmarks/bilevel_set.py: the bench's calgary/pic and a set it makes), cm level {level}, "
             "each file alone in one process.", "", f"| file | bytes | {head} |",
             "|---|---:|" + "---:|" * len(versions)]
    for name, r in rows.items():
        cells = " | ".join(f"{r[v][0]:,} ({8 * r[v][0] / r['bytes']:.3f}), {r[v][1]:.1f}" for v in versions)
        lines.append(f"| {name} | {r['bytes']:,} | {cells} |")
    write_md(RESULTS / "bilevel.md", lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "bilevel-set")
    ap.add_argument("--measure", action="store_true")
    ap.add_argument("--level", type=int, default=8)
    ap.add_argument("--versions", type=int, nargs="+", default=[7, 8])
    args = ap.parse_args()
    if args.measure:
        measure(args.out, args.level, args.versions)
    else:
        build(args.out)


if __name__ == "__main__":
    main()
