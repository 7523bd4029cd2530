"""`lmzip bench`: the click layer over lmzip.bench.runner and lmzip.bench.report."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from lmzip.cli import ui
from lmzip.cli.io import parse_size
from lmzip.errors import LmzipError

DEFAULT_OUT = Path("lmzip-bench")  # relative to the current folder; `make bench` passes --out benchmarks/results/…


def _csv(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--suite", type=click.Choice(["default", "full"]), default="default", show_default=True,
              help="default: ten text/code files, about 10 minutes; full: every file of the corpus.")
@click.option("--corpus", type=click.Path(path_type=Path),
              help="Corpus folder (default: the corpora bundled with lmzip).")
@click.option("--files", help="Comma-separated files of the corpus (relative paths or names).")
@click.option("--compressors", help="Comma-separated compressor names (default: all; the learning ones, +adapt, "
              "+adapt+mix and +scratch, only with --suite full; see --list).")
@click.option("--limit", type=int, help="Use only the first BYTES of each file.")
@click.option("--dataset", help="A local or cached Hugging Face dataset (offline).")
@click.option("--split", default="train", show_default=True)
@click.option("--column", default="text", show_default=True)
@click.option("--jobs", default=1, show_default=True, help="Compressors measured at once (each on one thread).")
@click.option("--out", type=click.Path(path_type=Path), default=DEFAULT_OUT, show_default=True,
              help="Where to write JSON/Markdown/CSV/plots (relative to the current folder).")
@click.option("--update", is_flag=True,
              help="Merge into OUT's results by (compressor, file): re-measured pairs are replaced, every "
              "other row kept (runs split by file or compressor across machines add up).")
@click.option("--ray", "ray_address", is_flag=False, flag_value="local", default=None, metavar="[ADDRESS]",
              help="Each compressor × file a Ray task: on this machine, or on the cluster at ADDRESS (HOST:PORT, "
              "auto; write --ray=ADDRESS before files). Needs pip install 'lmzip[cluster]'; --jobs is Ray's then.")
@click.option("--block-size", "block_size", metavar="SIZE",
              help="lmzip's compressors code in blocks of SIZE, such as 1M (default 4 MiB; with --ray every block "
              "of a larger file is a task of its own).")
@click.option("--no-plots", is_flag=True, help="No PNG plots (they need matplotlib).")
@click.option("--list", "list_only", is_flag=True, help="List the compressor names and exit.")
@click.option("--no-progress", is_flag=True, help="No progress bar (there is none when stderr is not a terminal).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no closing hints.")
@ui.guard(interrupted="interrupted; nothing was written")
def bench_cmd(paths, suite, corpus, files, compressors, limit, dataset, split, column, jobs, out, update, ray_address,
              block_size, no_plots, list_only, no_progress, quiet) -> None:
    """Benchmark lmzip's models against gzip, bzip2, xz, zstd, brotli and PPMd; every result verified."""
    from lmzip.bench import cluster, report
    from lmzip.bench import compressors as comp
    from lmzip.bench import runner as bench

    if ray_address is not None and not cluster.available():
        ui.error("--ray needs Ray, which is not installed: pip install 'lmzip[cluster]'")
        sys.exit(2)
    if ray_address is not None:
        cluster.check_address(ray_address)
    reg = comp.registry()
    if list_only:
        for name, entry in reg.items():
            ui.out.print(f"{name}\t{'language model' if entry.lm else 'classic'}", markup=False)
        return
    block_size = parse_size(block_size)
    if block_size is not None:
        from lmzip.coding.settings import Settings

        try:
            Settings.make(block_size=block_size)
        except ValueError as e:
            raise LmzipError(str(e)) from e
    # learning while coding (~4x the time) and the legacy models run when named or with --suite full
    names = _csv(compressors) or comp.suite_names(suite)
    unknown = [n for n in names if n not in reg]
    if unknown:
        raise LmzipError(f"unknown compressor {unknown[0]!r} (known: {', '.join(reg)})")
    bundled = not paths and not dataset and corpus is None
    sources = []
    if paths:
        sources += bench.path_sources(list(paths), limit)
    if dataset:
        sources.append(bench.dataset_source(dataset, split, column, limit, bench.temp_workdir()))
    if not paths and not dataset:
        root = corpus or bench.bundled_corpus()
        wanted = _csv(files) or (bench.DEFAULT_FILES if suite == "default" and corpus is None else None)
        sources = bench.corpus_sources(root, wanted, limit)
    _check_out(out)
    if not no_plots and importlib.util.find_spec("matplotlib") is None:
        ui.error("matplotlib is not installed, so no plots (pip install 'lmzip[bench]' adds it)")
        no_plots = True
    command = "lmzip bench " + " ".join(sys.argv[2:])
    earlier = _earlier(out, names, [s.label for s in sources]) if update else None
    with _progress(len(names) * len(sources), not (quiet or no_progress)) as (started, finished):
        if ray_address is not None:
            rows = cluster.run(names, sources, ray_address, finished, block_size=block_size)
        else:
            rows = bench.run(names, sources, jobs, finished, started, block_size)
    doc = {"environment": bench.environment(command), "suite": suite if bundled else "custom",
           "sources": [s.__dict__ for s in sources], "rows": rows, "published": report.PUBLISHED}
    if earlier is not None:
        try:  # checked before measuring too; this catches a model id only known once built (+scratch)
            doc = report.merge(earlier, doc)
        except LmzipError as e:
            kept = out / "results.unmerged.json"
            report.save_json(doc, kept)
            ui.error(f"{e} (this run's results: {kept})")
            sys.exit(ui.ERROR)
    for t in report.rich_tables(doc):
        ui.out.print(t)
    written = report.save_all(doc, out, not no_plots)
    ui.err.print(f"wrote {', '.join(str(p) for p in written)}", markup=False)
    if ray_address is not None and not quiet:
        ui.err.print(_nodes_line(rows), markup=False)
    if suite == "default" and bundled and not files and not quiet:
        ui.err.print("This was the default suite; every bundled file, the learning rows (+adapt, +adapt+mix, "
                     "+scratch) and the legacy models: lmzip bench --suite full (hours).")
    bad = [r for r in rows if not r["verified"]]
    if bad:
        ui.error(f"{len(bad)} result(s) failed verification: " + "; ".join(
            f"{r['compressor']} × {r['file']}: {r['error']}" for r in bad[:3]))
        sys.exit(ui.ERROR)


def _nodes_line(rows: list[dict]) -> str:
    """How the rows of a Ray run crossed nodes: every row records where it was compressed and decompressed."""
    from lmzip.bench.cluster import crossed

    nodes = {n for r in rows for k in ("compress_node", "decompress_node") for n in (r.get(k) or "").split(",") if n}
    across = sum(crossed(r) for r in rows)
    return f"Ray: {len(nodes)} node(s); {across} of {len(rows)} rows decompressed on another node than compressed"


def _earlier(out: Path, names: list[str], files: list[str]) -> dict:
    """The results --update merges into, checked before anything is measured: the rows this run will
    write must agree with the ones it keeps on the lmzip version and the model id (report.merge_rows)."""
    from lmzip import __version__
    from lmzip.bench import compressors, report

    if not (out / "results.json").is_file():
        raise LmzipError(f"--update needs earlier results: no {out / 'results.json'}")
    doc = report.load(out / "results.json")
    planned = [{"compressor": n, "file": f, "lmzip": __version__, "model_id": compressors.expected_model_id(n)}
               for n in names for f in files]
    report.merge_rows(report.stamped(doc["rows"], doc), planned)
    return doc


def _check_out(out: Path) -> None:
    """Refuse an --out that cannot be written before hours of measuring, not after."""
    if out.exists() and not out.is_dir():
        raise LmzipError(f"--out {out}: not a folder")
    existing = next(p for p in (out, *out.absolute().parents) if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise LmzipError(f"--out {out}: {existing} is not a writable folder")


@contextlib.contextmanager
def _progress(total: int, enabled: bool) -> Iterator[tuple[Callable[[str, str], None], Callable[[dict], None]]]:
    """A bar over compressor × file on stderr, only when it is a terminal: what runs, done/total, ETA.
    Yields (started(compressor, file), finished(row))."""
    if not enabled or not ui.err.is_terminal:
        yield (lambda c, f: None), (lambda r: None)
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*cols, console=ui.err, transient=True) as bar:
        task = bar.add_task("bench", total=total)

        def started(compressor: str, file: str) -> None:
            bar.update(task, description=f"bench {compressor} × {file}", refresh=True)

        def finished(row: dict) -> None:
            bar.update(task, advance=1, refresh=True)

        yield started, finished
