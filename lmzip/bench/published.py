"""Published figures of compressors the benchmark does not run (cmix, paq8px, NNCP, ts_zip), with the
publications they are quoted from. They travel with the package, so a report written from an install
cites its sources, not a file of the repository."""

from __future__ import annotations

from typing import Any

# compressor -> (title, address): where its figures below were published
SOURCES: dict[str, tuple[str, str]] = {
    "cmix v21": ("Byron Knoll, cmix v21 (2024), benchmark tables", "https://www.byronknoll.com/cmix.html"),
    # the quote gives no version or table for these two figures: the project is cited, not a page of it
    "paq8px": ("paq8px (Ondrus, Pais et al.), project repository", "https://github.com/hxim/paq8px"),
    "NNCP v3.2": ("Fabrice Bellard, NNCP, results table", "https://bellard.org/nncp/"),
    "ts_zip (RWKV 169M, GPU)": ("Fabrice Bellard, ts_zip, compression ratio table", "https://bellard.org/ts_zip/"),
}

# bits per byte = 8 × compressed / original, as published; NOT run here
_FIGURES = [
    ("cmix v21", "alice29.txt", 1.635), ("cmix v21", "book1", 1.901), ("cmix v21", "enwik8", 1.170),
    ("paq8px", "alice29.txt", 1.728), ("paq8px", "book1", 1.908),
    ("NNCP v3.2", "enwik8", 1.193),
    ("ts_zip (RWKV 169M, GPU)", "alice29.txt", 1.142), ("ts_zip (RWKV 169M, GPU)", "book1", 1.431),
    ("ts_zip (RWKV 169M, GPU)", "enwik8", 1.106),
]


def figures() -> list[dict[str, Any]]:
    """Every published figure: compressor, file, bpb and the address it was published at."""
    return [{"compressor": c, "file": f, "bpb": bpb, "source": SOURCES[c][1]} for c, f, bpb in _FIGURES]


def cite(compressor: str) -> str:
    """A Markdown link to the publication of ``compressor``'s figures ("—" when unknown)."""
    if compressor not in SOURCES:
        return "—"
    title, url = SOURCES[compressor]
    return f"[{title}]({url})"
