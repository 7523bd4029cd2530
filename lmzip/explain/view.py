"""Views of an Explanation: coloured terminal text, a self-contained HTML page, the positions plot."""

from __future__ import annotations

import codecs
import html
import json
from pathlib import Path

import numpy as np
from rich.text import Text

from lmzip.explain.analysis import Explanation, compare, position_sums, surprising_spans

# bits per byte -> a background colour, from cheap (green) to expensive (red)
LEVELS = [(1.0, "#1a9850"), (2.0, "#91cf60"), (3.0, "#d9ef8b"), (5.0, "#fee08b"), (8.0, "#fc8d59"),
          (float("inf"), "#d73027")]


SHOW = {"\r": "↵"}  # CR is common (CRLF files): a visible mark rather than an escape


def display_pieces(pieces: list[bytes]) -> list[str]:
    """Each token as safe text: UTF-8 decoded across token boundaries, anything else escaped."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")
    out = []
    for i, p in enumerate(pieces):
        s = dec.decode(p, final=i == len(pieces) - 1)
        out.append("".join(c if c in "\n\t" or (c.isprintable() and c != "\x7f") else SHOW.get(c, repr(c)[1:-1])
                           for c in s))
    return out


def colour(bits_per_byte: float) -> str:
    """The background colour of a token costing this many bits per byte."""
    return next(c for limit, c in LEVELS if bits_per_byte < limit)


def terminal_text(ex: Explanation, max_tokens: int) -> Text:
    """The input with every token on the colour of its cost (rich wraps it to the terminal)."""
    t = Text()
    shown = display_pieces(ex.pieces[:max_tokens])
    for s, piece, b in zip(shown, ex.pieces, ex.bits, strict=False):
        t.append(s, style=f"black on {colour(b / max(1, len(piece)))}")
    return t


def legend() -> Text:
    t = Text("cost (bits per byte): ")
    lo = 0.0
    for limit, c in LEVELS:
        label = f" {lo:g}–{limit:g} " if limit != float("inf") else f" ≥{lo:g} "
        t.append(label, style=f"black on {c}")
        lo = limit
    return t


def summary_lines(ex: Explanation, n: int = 5) -> list[str]:
    """Bits per byte and the most surprising spans, as plain lines."""
    lines = [f"{ex.model}: {ex.bits_per_byte:.3f} bits per byte ({ex.bits.sum() / 8:,.0f} bytes coded "
             f"for {ex.n_bytes:,}), {len(ex.bits):,} tokens"]
    for i, bits, span in surprising_spans(ex, n):
        text = "".join(display_pieces([span])).replace("\n", "\\n")
        lines.append(f"  {bits:7.1f} bits at token {i:,}: {text!r}")
    return lines


def _tip(ex: Explanation, k: int) -> str:
    piece = ex.pieces[k]
    tip = f"{ex.bits[k]:.2f} bits ({ex.bits[k] / max(1, len(piece)):.2f} per byte)"
    if ex.top and ex.top[k]:
        tip += "\ntop: " + ", ".join(f"{''.join(display_pieces([p]))!r} {q:.1%}" for p, q in ex.top[k])
    return tip


def html_page(ex: Explanation, other: Explanation | None, max_tokens: int, title: str) -> str:
    """One self-contained page (no network resources): coloured text with tooltips, and with
    ``other`` a side-by-side view of where each model is cheaper."""
    n = min(len(ex.pieces), max_tokens)
    shown = display_pieces(ex.pieces[:n])
    parts = []
    for k, s in enumerate(shown):
        c = colour(ex.bits[k] / max(1, len(ex.pieces[k])))
        parts.append(f'<span style="background:{c}" title="{html.escape(_tip(ex, k))}">{html.escape(s)}</span>')
    notice = (f'<p class="notice">Showing the first {n:,} of {len(ex.pieces):,} tokens (--max-tokens); the '
              f"summary covers the whole input.</p>" if n < len(ex.pieces) else "")
    panels = [f'<div class="panel"><h2>{html.escape(ex.model)}: {ex.bits_per_byte:.3f} bits/byte</h2>'
              f'<pre>{"".join(parts)}</pre></div>']
    diff_table = ""
    if other is not None:
        d = compare(ex, other)
        dparts = []
        for k, s in enumerate(shown):
            x = float(np.clip(d[k] / max(1, len(ex.pieces[k])) / 4, -1, 1))
            bg = f"rgba(33,102,172,{-x:.2f})" if x < 0 else f"rgba(230,97,1,{x:.2f})"
            tip = f"{ex.model}: {ex.bits[k]:.2f} bits, {other.model}: {ex.bits[k] - d[k]:.2f} bits"
            dparts.append(f'<span style="background:{bg}" title="{html.escape(tip)}">{html.escape(s)}</span>')
        panels.append(f'<div class="panel"><h2>{html.escape(ex.model)} vs {html.escape(other.model)} '
                      f"({other.bits_per_byte:.3f} bits/byte): blue = {html.escape(ex.model)} cheaper, orange = "
                      f'{html.escape(other.model)} cheaper</h2><pre>{"".join(dparts)}</pre></div>')
        diff_table = _diff_table(ex, other, d)
    legend_html = "".join(f'<span style="background:{c}">&lt;{lim:g}</span> ' for lim, c in LEVELS[:-1])
    spans = "".join(f"<li>{b:.1f} bits at token {i:,}: <code>{html.escape(''.join(display_pieces([s])))}</code></li>"
                    for i, b, s in surprising_spans(ex))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }}
pre {{ white-space: pre-wrap; word-wrap: break-word; font: 13px/1.5 ui-monospace, monospace; }}
pre span:hover {{ outline: 2px solid #000; }}
.wrap {{ display: flex; gap: 1.5em; }} .panel {{ flex: 1; min-width: 0; }}
h2 {{ font-size: 1em; }} .notice {{ background: #fff3cd; padding: .4em; }}
.legend span {{ padding: 0 .4em; color: #000; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{ex.n_bytes:,} bytes, {len(ex.pieces):,} tokens. Each token is coloured by the bits the range coder really
paid for it (quantized probabilities); hover a token for its cost and the model's top predictions.</p>
<p class="legend">bits per byte: {legend_html}<span style="background:{LEVELS[-1][1]}">≥8</span></p>
{notice}<h2>Most surprising spans</h2><ul>{spans}</ul>{diff_table}
<div class="wrap">{"".join(panels)}</div>
</body></html>
"""


def _diff_table(a: Explanation, b: Explanation, d: np.ndarray, n: int = 5, w: int = 8) -> str:
    sums = np.convolve(d, np.ones(min(w, len(d))), mode="valid") if len(d) else np.zeros(0)
    rows = []
    for label, idx in ((f"{a.model} cheapest", np.argsort(sums)[:n]), (f"{b.model} cheapest", np.argsort(-sums)[:n])):
        for i in idx:
            text = html.escape("".join(display_pieces(a.pieces[i : i + w])))
            rows.append(f"<tr><td>{html.escape(label)}</td><td>{-sums[i]:+.1f}</td><td><code>{text}</code></td></tr>")
    return ("<h2>Where the models differ most (bits saved by the first model over 8 tokens)</h2>"
            f"<table>{''.join(rows)}</table>")


def positions_plot(curves: dict[str, dict], out: Path, title: str) -> None:
    """Mean bits per byte against the token's position in its context, one line per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for name, c in curves.items():
        edges = np.unique(np.round(np.geomspace(1, len(c["bpb"]), 40)).astype(int))
        xs, ys = [0], [c["bits"][0] / max(1e-9, c["bytes"][0])]
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            seg = np.array(c["bits"][lo:hi]), np.array(c["bytes"][lo:hi])
            if seg[1].sum() > 0:
                xs.append((lo + hi - 1) / 2)
                ys.append(seg[0].sum() / seg[1].sum())
        ax.plot(np.array(xs) + 1, ys, "o-", ms=3, label=name)
    ax.set_xscale("log")
    ax.set_xlabel("position of the token in its context (tokens seen before it + 1, log scale)")
    ax.set_ylabel("mean bits per byte")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def curve_record(ex: Explanation, max_pos: int) -> dict:
    """The positions curve of one explanation as JSON-able lists (bits and bytes per position)."""
    _, bits, byts = position_sums(ex, max_pos)
    with np.errstate(invalid="ignore", divide="ignore"):
        bpb = bits / byts
    return {"bits": bits.tolist(), "bytes": byts.tolist(), "bpb": [None if np.isnan(x) else x for x in bpb],
            "total_bpb": ex.bits_per_byte}


def save_curves(curves: dict[str, dict], out: Path) -> None:
    out.write_text(json.dumps(curves) + "\n")
