"""Tables the CLI prints: .lmz headers and installed models (neither needs torch)."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from lmzip import files
from lmzip.arith import versions
from lmzip.cli import ui
from lmzip.coding import format as fmt
from lmzip.errors import LmzipError
from lmzip.models import registry


def header_record(name: str, size: int, heads: list[fmt.Header]) -> dict:
    """The fields of a file's headers (one per block; the first block's layout), as a flat dict."""
    coded = [h for h in heads if not h.stored]
    h = coded[0] if coded else heads[0]
    original = sum(x.original_length for x in heads)
    return {
        "file": name, "version": h.version,
        "mode": "stored" if not coded else "counted" if coded[0].counting else "coded",
        "model": h.model_name or None, "model_id": h.model_id.hex() if coded else None,
        "original_bytes": original, "compressed_bytes": size,
        "bits_per_byte": round(8 * size / max(1, original), 4),
        "crc32": f"{heads[0].crc32:08x}" if len(heads) == 1 else None,
        "members": sum(1 for x in heads if x.block == 0),  # files concatenated (cat a.lmz b.lmz), each from block 0
        "blocks": len(heads), "stored_blocks": len(heads) - len(coded), "block_size": h.block_size or None,
        "tokens": sum(x.n_tokens for x in coded), "segments": h.n_segments, "segment_length": h.segment_length,
        "groups": h.groups, "mix": h.mix or h.match, "adapt": h.adapt,
        "adapt_lr": h.adapt_lr if h.adapt else None, "adapt_steps": h.adapt_steps if h.adapt else None,
        "seed": h.seed, "crlf": h.crlf,
        "arithmetic": "stored" if not coded else versions.ARITHMETICS[h.arith].words,
    }


def layout_line(r: dict) -> str:
    """A header record's layout in one line (what ``-v`` prints after each file's summary)."""
    if r["mode"] == "stored":
        return f"stored, {r['blocks']} block(s)"
    if r["mode"] == "counted":  # no tokens and no model: lmzip.cm counted the bytes
        return (f"counted by {r['model']} (no language model), {r['blocks']} block(s)"
                + (f" ({r['stored_blocks']} stored)" if r["stored_blocks"] else "")
                + f", arithmetic {r['arithmetic']}")
    first = " in the first block" if r["blocks"] > 1 else ""
    parts = [f"{r['tokens']:,} tokens; {r['segments']} segments of {r['segment_length']}, {r['groups']} group(s)"
             f"{first}", f"model id {r['model_id'][:12]}"]
    if r["blocks"] > 1:
        parts.append(f"{r['blocks']} blocks of up to {ui.human(r['block_size'] or 0)}"
                     + (f" ({r['stored_blocks']} stored)" if r["stored_blocks"] else ""))
    parts += ["CRLF"] * r["crlf"] + ["mix"] * r["mix"]
    if r["adapt"]:
        parts.append(f"adapt lr {r['adapt_lr']:g} every {r['adapt_steps']} steps")
    if r["seed"] is not None:
        parts.append(f"random weights seed {r['seed']}")
    return ", ".join([*parts, f"arithmetic {r['arithmetic']}"])


def list_headers(inputs, as_json: bool) -> int:
    """Print the headers of .lmz files; returns the exit status."""
    rows, status = [], ui.OK
    for name in inputs:
        try:
            f = files.open_input(Path(name))
        except LmzipError as e:
            ui.error(str(e))
            status = ui.ERROR
            continue
        try:
            with f:
                heads = [h for h, _ in fmt.read_frames(f)]  # every frame checked, no payload kept
                rows.append(header_record(name, f.tell(), heads))
        except LmzipError as e:
            ui.error(f"{name}: {e}")
            status = ui.ERROR
    if as_json:
        ui.out.print_json(json.dumps(rows))
        return status
    if rows:
        t = Table("file", "mode", "model", "original", "compressed", "bpb", "blocks", "segments", "arithmetic",
                  "crc32")
        for r in rows:
            arith = r["arithmetic"]
            t.add_row(r["file"], r["mode"], r["model"] or "-", f"{r['original_bytes']:,}",
                      f"{r['compressed_bytes']:,}", f"{r['bits_per_byte']:.3f}", str(r["blocks"]),
                      f"{r['segments']} x {r['segment_length']}" if r["segments"] else "-", arith,
                      r["crc32"] or "per block")
        ui.out.print(t)
    return status


def measured_speed() -> dict:
    """Speeds that benchmarks/speed.py measured for the shipped models (KB/s), if any."""
    try:
        return json.loads((registry.SHIPPED / "speed.json").read_text())
    except (OSError, ValueError):
        return {}


def model_record(name: str, path: Path, cfg: dict, speeds: dict) -> dict:
    """One installed model's facts, from its config.json (and the measured speeds)."""
    m, tr = cfg.get("model", {}), cfg.get("training", {})
    speed = speeds.get(name, {}) if path.parent == registry.SHIPPED else {}
    size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    return {
        "name": name, "arch": (cfg.get("imported") or {}).get("from") or m.get("arch"),
        "params": cfg.get("params"), "file_bytes": size,
        "id": cfg.get("id"), "tokenizer": cfg.get("tokenizer"), "vocab": m.get("vocab_size"),
        "layers": m.get("n_layer"), "width": m.get("n_embd"), "context": m.get("context"),
        "tokens_seen": tr.get("tokens_seen"), "valid_bpb": tr.get("valid_bpb"),
        "compress_kbps": speed.get("compress_kbps"), "decompress_kbps": speed.get("decompress_kbps"),
        "path": str(path),
    }


def list_models(as_json: bool) -> None:
    """Print the installed models."""
    speeds = measured_speed()  # read once, not once per model
    rows = [model_record(n, p, c, speeds) for n, (p, c) in registry.available().items()]
    if as_json:
        ui.out.print_json(json.dumps(rows))
        return
    t = Table("name", "arch", "params", "size", "id", "tokenizer", "train tokens", "valid bpb", "KB/s c/d",
              caption=f"default: {registry.DEFAULT_MODEL}; more folders via LMZIP_MODELS")
    for r in rows:
        t.add_row(r["name"], f"{r['arch']} {r['layers']}x{r['width']}", f"{(r['params'] or 0) / 1e6:.2f} M",
                  ui.human(r["file_bytes"]), (r["id"] or "")[:12], f"{r['tokenizer']} {r['vocab']}",
                  f"{r['tokens_seen'] / 1e6:.1f} M" if r["tokens_seen"] is not None else "-",
                  f"{r['valid_bpb']:.3f}" if r["valid_bpb"] else "-",
                  f"{r['compress_kbps']:.1f}/{r['decompress_kbps']:.1f}" if r["compress_kbps"] else "-")
    ui.out.print(t)
    ui.out.print(level_table())


def level_table() -> Table:
    """The levels -1 … -9 with what benchmarks/levels.py measured for each."""
    from lmzip.levels import DEFAULT, LEVELS, measured

    figures = measured()
    file = next(iter(figures.values()), {}).get("file", "")
    t = Table("level", "model", "options", "bpb", "KB/s c/d", "peak MiB",
              caption=f"lmzip -N FILE; bpb over {file}, one thread; no level: -{DEFAULT}" if file else None)
    for n, lv in LEVELS.items():
        f = figures.get(n, {})
        t.add_row(f"-{n}", lv.model, lv.what or "-", f"{f['bpb']:.4f}" if f else "-",
                  f"{f['compress_kbps']:.1f}/{f['decompress_kbps']:.1f}" if f else "-",
                  f"{f['peak_mib']:,}" if f.get("peak_mib") else "-")
    return t
