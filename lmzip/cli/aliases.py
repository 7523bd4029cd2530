"""``unlmz`` and ``lmzcat``: the gzip-like aliases of ``lmzip -d`` and ``lmzip -dc``."""

from __future__ import annotations

import sys

import click

from lmzip.cli import ui
from lmzip.cli.main import main as lmzip


class Alias(click.Command):
    """A command that runs ``lmzip PREFIX ARGS`` through the gzip front end (``unlmz``, ``lmzcat``)."""

    def __init__(self, name: str, prefix: list[str], help: str):
        super().__init__(name, help=help, add_help_option=False)
        self.prefix = prefix

    def __call__(self, *args, **kwargs):  # type: ignore[override]
        """The program's entry: see ui.as_program."""
        return ui.as_program(lambda: self.main(*args, **kwargs))

    def main(self, args=None, prog_name=None, **extra):  # type: ignore[override]
        """Run ``lmzip PREFIX ARGS`` (``ARGS``: the command line's, unless given)."""
        args = sys.argv[1:] if args is None else list(args)
        return lmzip.main([*self.prefix, *args], prog_name="lmzip", **extra)


unlmz = Alias("unlmz", ["-d"], "Decompress FILES (or standard input): lmzip -d, as gunzip.")
lmzcat = Alias("lmzcat", ["-dc"], "Decompress FILES (or standard input) to standard output: lmzip -dc, as zcat.")
