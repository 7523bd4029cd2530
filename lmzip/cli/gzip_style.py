"""gzip-style invocation: ``lmzip [-d|-t|-l] [FLAGS] [FILES]`` beside the subcommands, and ``unlmz``/``lmzcat``.

When the first argument is not a subcommand name (nor ``-h``/``-V``), the arguments are gzip flags:
``-d``/``--decompress`` runs ``decompress``, ``-t``/``--test`` ``test``, ``-l``/``--list`` ``list``, anything else
``compress``; as in gzip, ``-l`` wins over ``-t``, and ``-t`` over ``-d``. Mode letters may sit in a cluster
(``-dc``, ``-cdf``); every other flag passes through to that subcommand, and a flag of a sibling subcommand
that the chosen one lacks (``-9``-like settings: ``--mix`` with ``-d``, ``-c`` with ``-t``) is ignored, as gzip
ignores ``-9`` when decompressing. Flags no subcommand knows reach click, which reports them. With no arguments
``lmzip`` compresses standard input to standard output (``tar -I lmzip``) unless standard input is a terminal,
where it prints the help. A file named like a subcommand is written ``./test`` or after ``--``.
"""

from __future__ import annotations

from typing import Any

import click

from lmzip.cli import ui

MODES = {"d": "decompress", "t": "test", "l": "list"}
LONG_MODES = {"--decompress": "d", "--uncompress": "d", "--test": "t", "--list": "l"}
TOP_LEVEL = {"-h", "--help", "-V", "--version"}


class GzipGroup(click.Group):
    """A click group whose arguments, when they do not start with a subcommand, are read as gzip's."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The program's entry (not CliRunner's, which calls ``main``): see ui.as_program."""
        return ui.as_program(lambda: self.main(*args, **kwargs))

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Rewrite gzip-style arguments to ``SUBCOMMAND ARGS``, then parse as usual."""
        if not args:
            if ui.stdin_is_terminal():
                click.echo(ctx.get_help())
                ctx.exit(0)
            args = ["compress"]  # standard input to standard output: a filter, as tar -I runs it
        elif args[0] not in self.commands and args[0] not in TOP_LEVEL:
            args = self.rewrite(args)
        _check_levels(args)
        return super().parse_args(ctx, args)

    def rewrite(self, args: list[str]) -> list[str]:
        """gzip arguments -> ``[subcommand, *arguments]`` (mode flags removed, inapplicable flags dropped)."""
        subs = {name: _options(self.commands[name]) for name in ("compress", *MODES.values())}
        known = set().union(*subs.values())
        takes_value = {o for name in subs for o in _options(self.commands[name], values_only=True)}
        modes, _ = _scan(args, takes_value, drop=set())
        mode = next((MODES[m] for m in "ltd" if m in modes), "compress")
        drop = known - subs[mode]
        return [mode, *_scan(args, takes_value, drop)[1]]


def _check_levels(args: list[str]) -> None:
    """``-10`` or ``-19`` (zstd's levels) is not two options ``-1 -0``: say which levels there are."""
    for a in args:
        if a == "--":
            return
        if len(a) > 2 and a[0] == "-" and a[1:].isdigit():
            raise click.UsageError(f"no level {a}: the levels are -1 (fastest) to -9 (smallest)")


def _options(cmd: click.Command, values_only: bool = False) -> set[str]:
    """The option strings of ``cmd`` (only those that take a value, with ``values_only``)."""
    return {o for p in cmd.params if isinstance(p, click.Option) and not (values_only and p.is_flag)
            for o in (*p.opts, *p.secondary_opts)}


def _scan(args: list[str], takes_value: set[str], drop: set[str]) -> tuple[set[str], list[str]]:
    """Split ``args`` into the mode letters it names and the rest, less the options in ``drop`` (and their
    values). Short clusters are taken apart as getopt does: a letter that takes a value ends the cluster."""
    modes: set[str] = set()
    rest: list[str] = []
    i = 0
    while i < len(args):
        a, i = args[i], i + 1
        if a == "--" or not a.startswith("-") or a == "-":
            rest.append(a)
            if a == "--":
                return modes, rest + args[i:]
            continue
        if a in LONG_MODES:
            modes.add(LONG_MODES[a])
            continue
        if a.startswith("--"):
            name = a.split("=", 1)[0]
            value = [args[i]] if name == a and name in takes_value and i < len(args) else []
            i += len(value)
            if name not in drop:
                rest += [a, *value]
            continue
        kept = ""
        for j, ch in enumerate(a[1:], 2):
            if ch in MODES:
                modes.add(ch)
                continue
            opt = "-" + ch
            if opt in takes_value:  # the rest of the cluster, or the next argument, is its value
                if j < len(a):
                    value = [a[j:]]
                elif i < len(args):
                    value, i = [args[i]], i + 1
                else:
                    value = []  # click reports the missing value
                rest += ["-" + kept] if kept else []
                rest += [] if opt in drop else [opt, *value]
                kept = ""
                break
            if opt not in drop:
                kept += ch
        if kept:
            rest.append("-" + kept)
    return modes, rest
