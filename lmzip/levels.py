"""Compression levels -1 … -9: nine points on a measured speed/ratio frontier, fastest first.

Each level is a shipped model (or ``cm``: counting alone, lmzip.cm, no network) and a coding mode, and
writes fewer bytes than every faster level over a sample of every kind of input (the first 64 KB of
each of the 42 bench files and the kinds set) while it is no faster on alice29.txt (within the ~10% one
measurement varies); benchmarks/levels.py
measures them, one process and one thread each, into levels.json beside the weights, which
``lmzip models`` prints. Above -1 every level mixes counting in (--mix), and a block the model loses on
is counted alone (lmzip.coding.stream), so a higher level never pays much more than counting where the
model knows nothing.

-3 and -6 … -9 code fewer segments side by side (``rows``): longer segments cold-start less and the
counting models mixed in see more of each, for fewer bytes at less speed (gpt-large --mix --adapt on alice29.txt:
1.365 bits per byte in 3,312 MiB with the default's ~196 rows, 1.345 in 1,770 MiB with 64, 1.334 in
1,306 MiB with 32, 1.335 with 16); -9 adds larger counting tables (level 7's, 1,260 MiB a group: when format 12 mixed
cm version 9's models in, level 9's 2 GiB of tables took -9 to a 3.3 GiB peak on alice29.txt; with version 11's, level
8's held it at 2.8 GiB; with version 26's, level 8's, 2,164 MiB a group, took it to 3,571 MiB), and counts a block of
over 1 MiB alone at level 8 (``large``: tables of 2,164 MiB at most, made and freed before the groups make theirs):
where -9 gives the model up on such a block it then writes no more than cm-9 about (world192.txt 280,269 -> 278,436
bytes, bible.txt 612,706 -> 610,618, at compressing peaks of 2,544 and 2,565 MiB).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from lmzip.models import registry


@dataclass(frozen=True)
class Level:
    """A shipped model (or ``cm``, counting alone) and the coding mode a level stands for: the modes, and
    where they differ from the defaults, the segments side by side (``rows``: fewer are longer, which
    codes smaller and slower) and the counting tables' level (``tables``, with mix)."""

    model: str
    mix: bool = False
    adapt: bool = False
    rows: int | None = None
    tables: int | None = None
    lead: int | None = None  # percent below counting's cost the mixed coder must keep (< 0: it may trail)
    trial: str | None = None  # a faster model that must be ahead of counting at a block's 16th first (Settings.trial)
    large: int | None = None  # the least counting level a block over 1 MiB is counted alone at (Settings.large_level)
    primed: bool = False  # a block counted alone runs over a primer first where one fits it (lmzip.cm.primers)

    @property
    def flags(self) -> str:
        """The options that ask for this mode on the command line ("" for static)."""
        return " ".join(o for o, on in (("--mix", self.mix), ("--adapt", self.adapt)) if on)

    @property
    def mode(self) -> str:
        """The mode as benchmarks/speed.py names it: static, mix, adapt or adapt+mix."""
        return "+".join(m for m, on in (("adapt", self.adapt), ("mix", self.mix)) if on) or "static"

    @property
    def what(self) -> str:
        """The mode in words, for tables and help: its flags, rows and tables where set."""
        parts = [self.flags] if self.flags else []
        parts += [f"{self.rows} rows"] if self.rows else []
        parts += [f"tables {self.tables}"] if self.tables else []
        parts += [f"lead {self.lead}%"] if self.lead is not None else []
        parts += [f"trial {self.trial}"] if self.trial else []
        parts += [f"large blocks counted at {self.large}"] if self.large else []
        parts += ["primed counting"] if self.primed else []
        return ", ".join(parts)

    def options(self) -> dict:
        """Settings.make's options for this level (what LMCompressor takes beside the model)."""
        return dict(mix=self.mix, adapt=self.adapt, rows=self.rows, tables=self.tables, lead=self.lead,
                    trial=self.trial, large=self.large, primed=self.primed)


# -6 … -9 give the mixed coder up only once it trails counting by 3% (the default's: once it is not 1%
# ahead), for more time on near ties: on the first 64 KB of bible.txt the default's rule gave up a block
# the mixed coder then wins by 18% (13,778 bytes counted, 11,302 mixed at -6's setting)
PATIENT = -3
# -7 … -9 learn while coding, at ~1/100 of counting's speed: reaching a block's 16th alone took 17x counting's time
# on 100 KB of code, which then stayed counted; the default's model tries that 16th first, at ~1/10
TRIAL = "gpt-wide"
LEVELS: dict[int, Level] = {
    1: Level("cm"), 2: Level("lstm-small", mix=True), 3: Level("lstm-small", mix=True, rows=64),
    4: Level("gpt-wide", mix=True),
    5: Level("gpt-large", mix=True), 6: Level("gpt-large", mix=True, rows=64, lead=PATIENT),
    7: Level("gpt-large", mix=True, adapt=True, rows=64, lead=PATIENT, trial=TRIAL, primed=True),
    8: Level("gpt-large", mix=True, adapt=True, rows=32, lead=PATIENT, trial=TRIAL, primed=True),
    9: Level("gpt-large", mix=True, adapt=True, rows=32, tables=7, lead=PATIENT, trial=TRIAL, large=8, primed=True),
}
DEFAULT = 4  # what `lmzip compress` does without a level: the default model with counting mixed in


def measured() -> dict[int, dict]:
    """Each level's bits per byte, KB/s and peak memory as benchmarks/levels.py measured them ({} where not)."""
    try:
        return {int(k): v for k, v in json.loads((registry.SHIPPED / "levels.json").read_text()).items()}
    except (OSError, ValueError):
        return {}
