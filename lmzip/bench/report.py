"""Render benchmark results from their JSON (the source of truth): rich, Markdown, CSV and plots."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

from rich.table import Table

from lmzip.bench import published
from lmzip.errors import LmzipError

# Quoted from their publications (lmzip.bench.published, which cites them), NOT run here.
PUBLISHED = published.figures()

CAPTION = ("bpb = bits per byte = 8 × compressed / original (lower is better; best per file in bold). "
           "ratio = original / compressed. +model = bpb counting the model file too. ideal = the model's "
           "cross-entropy in bits per byte; ppl = perplexity per token. KB/s = 1000 bytes of original per "
           "second, one thread (lmzip: one per segment group; format 8 makes a group per 128 segments "
           "of inputs over ~60 KB). "
           "peak = peak resident memory of the process(es). ✓ = decompressed and compared "
           "byte for byte.")


def derive(r: dict[str, Any]) -> dict[str, Any]:
    """A row with its metrics computed from the measured sizes and times."""
    o, c = r["original_bytes"], r["compressed_bytes"]
    d = dict(r)
    ok = c is not None and o > 0
    d["bpb"] = 8 * c / o if ok else None
    d["ratio"] = o / c if ok and c else None
    d["bpb_with_model"] = 8 * (c + r["model_bytes"]) / o if ok else None
    d["ideal_bpb"] = r["ideal_bits"] / o if ok and r.get("ideal_bits") is not None else None
    d["ppl_token"] = 2 ** (r["ideal_bits"] / r["tokens"]) if r.get("ideal_bits") and r.get("tokens") else None
    d["compress_kbps"] = o / 1000 / r["compress_s"] if r.get("compress_s") else None
    d["decompress_kbps"] = o / 1000 / r["decompress_s"] if r.get("decompress_s") else None
    return d


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per compressor over all files: total bpb, speeds, worst peak memory, all verified?"""
    out = []
    for name in dict.fromkeys(r["compressor"] for r in rows):
        rs = [r for r in rows if r["compressor"] == name]
        good = [r for r in rs if r["compressed_bytes"] is not None]
        orig = sum(r["original_bytes"] for r in good)
        comp = sum(r["compressed_bytes"] for r in good)
        ct, dt = sum(r["compress_s"] or 0 for r in good), sum(r["decompress_s"] or 0 for r in good)
        model = rs[0]["model_bytes"]
        ideal = [r for r in good if r.get("ideal_bits") is not None]
        ideal_bits, tokens = sum(r["ideal_bits"] for r in ideal), sum(r["tokens"] or 0 for r in ideal)
        out.append({
            "compressor": name, "settings": rs[0]["settings"], "files": len(rs), "original_bytes": orig,
            "compressed_bytes": comp, "bpb": 8 * comp / orig if orig else None,
            "ratio": orig / comp if comp else None,
            "ideal_bpb": ideal_bits / sum(r["original_bytes"] for r in ideal) if ideal else None,
            "ppl_token": 2 ** (ideal_bits / tokens) if tokens else None,
            "bpb_with_model": 8 * (comp + model) / orig if orig else None, "model_bytes": model,
            "compress_kbps": orig / 1000 / ct if ct else None, "decompress_kbps": orig / 1000 / dt if dt else None,
            "peak_mib": max((r["peak_mib"] or 0 for r in good), default=None),
            "verified": all(r["verified"] for r in rs),
        })
    return out


def load(path: Path) -> dict[str, Any]:
    """A results JSON file."""
    return json.loads(Path(path).read_text())


def stamped(rows: list[dict[str, Any]], doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows with their lmzip version and model id (rows written before rows carried them: the document's
    lmzip version, model id unknown)."""
    return [{**r, "lmzip": r.get("lmzip") or doc["environment"].get("lmzip"), "model_id": r.get("model_id")}
            for r in rows]


def check_consistent(rows: list[dict[str, Any]]) -> None:
    """Raise LmzipError when two rows of one compressor were measured with different lmzip versions or
    different models: their figures would sit in one summary row as if they were one measurement."""
    for key, what in (("lmzip", "lmzip version"), ("model_id", "model id")):
        seen: dict[str, dict[Any, str]] = {}
        for r in rows:
            if r.get(key) is not None:
                seen.setdefault(r["compressor"], {}).setdefault(r[key], r["file"])
        for comp, values in seen.items():
            if len(values) > 1:
                (a, fa), (b, fb) = list(values.items())[:2]
                raise LmzipError(f"cannot merge: {comp} has {what} {a} on {fa} but {b} on {fb}; "
                                 f"re-measure {comp} on every file with one {what}")


def merge_rows(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every row of ``old`` and ``new`` keyed by (compressor, file): a pair in both takes ``new``'s row
    in ``old``'s place, every other row is kept; rows grouped by compressor in order of appearance.
    Refuses (LmzipError) rows of one compressor that disagree on the lmzip version or the model id."""
    fresh = {(r["compressor"], r["file"]): r for r in new}
    rows = [fresh.pop((r["compressor"], r["file"]), r) for r in old] + list(fresh.values())
    check_consistent(rows)
    order = {c: i for i, c in enumerate(dict.fromkeys(r["compressor"] for r in rows))}
    return sorted(rows, key=lambda r: order[r["compressor"]])  # stable: files keep their order


def merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``old`` with ``new``'s rows merged in (merge_rows: re-measured pairs replaced, new pairs added,
    nothing dropped, so results split by file across machines add up), the update recorded in its
    environment."""
    rows = merge_rows(stamped(old["rows"], old), stamped(new["rows"], new))
    names = list(dict.fromkeys(r["compressor"] for r in new["rows"]))
    files = list(dict.fromkeys(r["file"] for r in new["rows"]))
    env = dict(old["environment"])
    update = {k: new["environment"].get(k) for k in ("lmzip", "git_commit", "cpu", "date", "command")}
    env["updates"] = [*env.get("updates", []), {"compressors": names, "files": files, **update}]
    return {**old, "rows": rows, "environment": env}


def _matrix(doc: dict[str, Any]) -> tuple[list[str], list[str], dict[tuple[str, str], dict[str, Any]]]:
    rows = [derive(r) for r in doc["rows"]]
    comps = list(dict.fromkeys(r["compressor"] for r in rows))
    files = list(dict.fromkeys(r["file"] for r in rows))
    return comps, files, {(r["compressor"], r["file"]): r for r in rows}


def _fmt(x: float | None, nd: int = 3) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def _cell(r: dict[str, Any] | None, best: float | None, bold: tuple[str, str]) -> str:
    if r is None:
        return "—"
    if r["error"] or not r["verified"]:
        return "✗"
    s = _fmt(r["bpb"])
    return f"{bold[0]}{s}{bold[1]}" if best is not None and abs(r["bpb"] - best) < 1e-12 else s


def _best(cells: dict, comps: list[str], f: str) -> float | None:
    vals = [cells[(c, f)]["bpb"] for c in comps if (c, f) in cells and cells[(c, f)]["verified"]]
    return min(vals) if vals else None


def rich_tables(doc: dict[str, Any]) -> list[Table]:
    """The terminal view: bits per byte per file (best in bold) and the per-compressor summary."""
    comps, files, cells = _matrix(doc)
    t = Table(title="bits per byte (8 × compressed / original)", caption=CAPTION, caption_justify="left")
    t.add_column("file")
    t.add_column("bytes", justify="right")
    for c in comps:
        t.add_column(c, justify="right")
    for f in files:
        best = _best(cells, comps, f)
        size = next((cells[(c, f)]["original_bytes"] for c in comps if (c, f) in cells), 0)
        t.add_row(f, f"{size:,}", *[_cell(cells.get((c, f)), best, ("[bold]", "[/bold]")) for c in comps])
    s = Table(title="per compressor, all files together")
    for col in ("compressor", "settings", "bpb", "ideal", "ppl", "ratio", "+model", "compress KB/s",
                "decompress KB/s", "peak MiB", "model bytes", "✓"):
        s.add_column(col, justify="left" if col in ("compressor", "settings") else "right")
    for r in summary([derive(x) for x in doc["rows"]]):
        s.add_row(r["compressor"], r["settings"], _fmt(r["bpb"]), _fmt(r["ideal_bpb"]), _fmt(r["ppl_token"], 1),
                  _fmt(r["ratio"], 2), _fmt(r["bpb_with_model"]),
                  _fmt(r["compress_kbps"], 1), _fmt(r["decompress_kbps"], 1), _fmt(r["peak_mib"], 0),
                  f"{r['model_bytes']:,}", "✓" if r["verified"] else "✗")
    return [t, s]


def markdown(doc: dict[str, Any]) -> str:
    """The Markdown report: both tables, the published reference rows and the environment."""
    comps, files, cells = _matrix(doc)
    lines = ["| file | bytes | " + " | ".join(comps) + " |", "|---|---:|" + "---:|" * len(comps)]
    for f in files:
        best = _best(cells, comps, f)
        size = next((cells[(c, f)]["original_bytes"] for c in comps if (c, f) in cells), 0)
        lines.append(f"| {f} | {size:,} | " + " | ".join(_cell(cells.get((c, f)), best, ("**", "**")) for c in comps)
                     + " |")
    lines += ["", "| compressor | settings | bpb (all files) | ideal | ppl/token | ratio | bpb +model | "
              "compress KB/s | decompress KB/s | peak MiB | model bytes | verified |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|"]
    for r in summary([derive(x) for x in doc["rows"]]):
        lines.append(f"| {r['compressor']} | {r['settings']} | {_fmt(r['bpb'])} | {_fmt(r['ideal_bpb'])} | "
                     f"{_fmt(r['ppl_token'], 1)} | {_fmt(r['ratio'], 2)} | {_fmt(r['bpb_with_model'])} | "
                     f"{_fmt(r['compress_kbps'], 1)} | {_fmt(r['decompress_kbps'], 1)} | {_fmt(r['peak_mib'], 0)} | "
                     f"{r['model_bytes']:,} | {'✓' if r['verified'] else '✗'} |")
    lines += ["", CAPTION, "", "Published figures (quoted, **not run here**; bits per byte):", "",
              "| compressor | file | bpb | published in |", "|---|---|---:|---|"]
    lines += [f"| {p['compressor']} | {p['file']} | {p['bpb']:.3f} | {published.cite(p['compressor'])} |"
              for p in doc.get("published", PUBLISHED)]
    env = doc["environment"]
    lines += ["", f"Measured with lmzip {env['lmzip']} (git {env['git_commit']}), torch {env['torch']}, "
              f"constriction {env['constriction']}, on {env['cpu']} ({env['cores']} cores, one thread per "
              f"compressor), {env['date']}: `{env['command']}`."]
    lines += [f"Re-measured: {', '.join(u['compressors'])} (" + (f"lmzip {u['lmzip']}, " if u.get("lmzip") else "")
              + f"git {u['git_commit']}, " + (f"on {u['cpu']}, " if u.get("cpu") else "")
              + f"{u['date']}): `{u['command']}`." for u in env.get("updates", [])]
    return "\n".join(lines) + "\n"


def to_csv(doc: dict[str, Any]) -> str:
    """Every row with every metric."""
    rows = [derive(r) for r in doc["rows"]]
    buf = io.StringIO()
    # the union of the rows' keys: merged rows from older results may lack newer fields
    w = csv.DictWriter(buf, fieldnames=list(dict.fromkeys(k for r in rows for k in r)) or ["compressor"])
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def plots(doc: dict[str, Any], outdir: Path) -> list[Path]:
    """bits per byte per file for every compressor, and bpb against decompression speed (Pareto)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    comps, files, cells = _matrix(doc)
    fig, ax = plt.subplots(figsize=(max(8, len(files) * 0.9), 4.8))
    width = 0.8 / max(1, len(comps))
    for i, c in enumerate(comps):
        ys = [cells[(c, f)]["bpb"] if (c, f) in cells and cells[(c, f)]["bpb"] else 0 for f in files]
        ax.bar([j + i * width for j in range(len(files))], ys, width, label=c)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(files))], files, rotation=30, ha="right")
    ax.set_ylabel("bits per byte")
    ax.set_title("bits per byte per file (lower is better)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    p1 = outdir / "bpb_per_file.png"
    fig.savefig(p1, dpi=110)
    plt.close(fig)
    summ = [s for s in summary([derive(r) for r in doc["rows"]]) if s["decompress_kbps"] and s["bpb"]]
    fig, ax = plt.subplots(figsize=(7, 4.8))
    for s in summ:
        ax.scatter(s["decompress_kbps"], s["bpb"], s=30)
        ax.annotate(s["compressor"], (s["decompress_kbps"], s["bpb"]), fontsize=8, xytext=(4, 3),
                    textcoords="offset points")
    front, best = [], math.inf
    for s in sorted(summ, key=lambda s: -s["decompress_kbps"]):
        if s["bpb"] < best:
            front.append(s)
            best = s["bpb"]
    ax.plot([s["decompress_kbps"] for s in front], [s["bpb"] for s in front], "--", color="grey", lw=1,
            label="Pareto frontier")
    ax.set_xscale("log")
    ax.set_xlabel("decompression speed, KB/s (one thread, log scale)")
    ax.set_ylabel("bits per byte, all files together")
    ax.set_title("ratio against speed")
    ax.legend()
    fig.tight_layout()
    p2 = outdir / "pareto.png"
    fig.savefig(p2, dpi=110)
    plt.close(fig)
    return [p1, p2]


def save_json(doc: dict[str, Any], path: Path) -> None:
    """One results JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")


def save_all(doc: dict[str, Any], outdir: Path, with_plots: bool = True) -> list[Path]:
    """Write results.json (the truth) and everything generated from it."""
    outdir.mkdir(parents=True, exist_ok=True)
    save_json(doc, outdir / "results.json")
    (outdir / "results.md").write_text(markdown(doc))
    (outdir / "results.csv").write_text(to_csv(doc))
    paths = [outdir / n for n in ("results.json", "results.md", "results.csv")]
    return paths + (plots(doc, outdir) if with_plots else [])
