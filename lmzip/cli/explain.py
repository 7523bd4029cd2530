"""`lmzip explain`: the click layer over lmzip.explain.analysis and its views."""

from __future__ import annotations

from pathlib import Path

import click

from lmzip.cli import ui
from lmzip.cli.io import no_progress_option
from lmzip.errors import LmzipError


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("inputs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-m", "--model", help="Model name or folder (default: the default model).")
@click.option("--vs", "versus", help="A second model to compare with (which spans each codes cheaper).")
@click.option("--html", "html_out", type=click.Path(path_type=Path), help="Write a self-contained HTML page.")
@click.option("--positions", "positions_out", type=click.Path(path_type=Path),
              help="Plot mean cost against the position in the context (PNG; a .json of the curves beside it).")
@click.option("--segment", type=click.IntRange(1), help="Segment length in tokens (default: as the codec chooses; "
              "--positions defaults to 1024).")
@click.option("--max-tokens", default=10000, show_default=True, type=click.IntRange(0),
              help="Tokens shown in the HTML page.")
@click.option("--max-bytes", default=3000, show_default=True, type=click.IntRange(0),
              help="Bytes shown in the terminal (0: none).")
@click.option("--limit", type=click.IntRange(0), metavar="BYTES",
              help="Explain only the first BYTES of the input (long files).")
@click.option("-q", "--quiet", is_flag=True, help="No notes on standard error and no progress bar.")
@no_progress_option()
@ui.guard
def explain_cmd(inputs, model, versus, html_out, positions_out, segment, max_tokens, max_bytes, limit, quiet,
                no_progress) -> None:
    """Show which bytes of FILE cost bits under a model, and why one model needs fewer than another."""
    from lmzip.explain.analysis import explain
    from lmzip.explain.view import (
        curve_record,
        html_page,
        legend,
        positions_plot,
        save_curves,
        summary_lines,
        terminal_text,
    )
    from lmzip.models import registry
    from lmzip.models.data import read_bytes

    note = (lambda text: None) if quiet else (lambda text: ui.err.print(text, markup=False))

    def run(data: bytes, m, seg: int | None, top_k: int = 5):
        """explain() under a live bar: tokens done of the input's, and the time left."""
        with ui.progress(f"explain {m.name} ({ui.human(len(data))})", not (quiet or no_progress), "tokens") as bar:
            return explain(data, m, seg, top_k, progress=bar)

    a = registry.load(model)
    b = registry.load(versus) if versus else None
    if positions_out is not None:
        seg = segment or 1024
        curves = {}
        for m in [a] + ([b] if b else []):
            data = b"".join(read_bytes(p)[:limit] for p in inputs)
            ex = run(data, m, seg, top_k=0)
            curves[m.name] = curve_record(ex, seg)
            note(f"{m.name}: {ex.bits_per_byte:.3f} bits/byte over {len(ex.bits):,} tokens")
        names = ", ".join(p.name for p in inputs)
        positions_plot(curves, positions_out, f"cost against context position ({names})")
        save_curves(curves, positions_out.with_suffix(".json"))
        note(f"wrote {positions_out} and {positions_out.with_suffix('.json')}")
        return
    if len(inputs) != 1:
        raise LmzipError("explain takes one file (several only with --positions)")
    full = read_bytes(inputs[0])
    data = full[:limit]
    if len(data) < len(full):
        note(f"explaining the first {len(data):,} of {len(full):,} bytes (--limit)")
    ex = run(data, a, segment)
    other = run(data, b, segment, top_k=0) if b else None
    if max_bytes:
        n, size = 0, 0
        while n < len(ex.pieces) and size < max_bytes:
            size += len(ex.pieces[n])
            n += 1
        ui.out.print(terminal_text(ex, n))
        if n < len(ex.pieces):
            ui.out.print(f"… showing the first {size:,} of {ex.n_bytes:,} bytes (--max-bytes)", markup=False)
        ui.out.print(legend())
    for line in summary_lines(ex) + (summary_lines(other, 0) if other else []):
        ui.out.print(line, markup=False)
    if html_out is not None:
        html_out.write_text(html_page(ex, other, max_tokens, f"lmzip explain: {inputs[0].name}"),
                            encoding="utf-8")
        note(f"wrote {html_out}")
