"""Compression levels -1 … -9: points on the measured speed/ratio frontier, fastest first.

Each level is a shipped model (or ``cm``: counting alone, lmzip.cm, no network) and a coding mode
that codes smaller than every faster level
(benchmarks/results/speed.md: alice29.txt, one thread, every shipped model in every mode; the other
combinations are slower for their size). ``lmzip models`` prints the table with its figures, which
benchmarks/speed.py writes beside the weights (levels.json).

Since format 11 every level above -1 mixes counting in (--mix): it costs a model ~0-10% of its speed
and gains 10-17% on alice29.txt, so every static mode is slower for its size than some mixed one.
The frontier then has six points; -6 … -9 are its last, gpt-large learning while coding (nothing
measured lies between it and gpt-large --mix: gpt-wide --mix --adapt codes 1.424 bits per byte at
5.9 KB/s, gpt-large --mix 1.416 at 19.4; --adapt-block 16 or 128 code worse than the default 32).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from lmzip.models import registry


@dataclass(frozen=True)
class Level:
    """A shipped model (or ``cm``, counting alone) and the coding mode a level stands for."""

    model: str
    mix: bool = False
    adapt: bool = False

    @property
    def flags(self) -> str:
        """The options that ask for this mode on the command line ("" for static)."""
        return " ".join(o for o, on in (("--mix", self.mix), ("--adapt", self.adapt)) if on)

    @property
    def mode(self) -> str:
        """The mode as benchmarks/speed.py names it: static, mix, adapt or adapt+mix."""
        return "+".join(m for m, on in (("adapt", self.adapt), ("mix", self.mix)) if on) or "static"


LEVELS: dict[int, Level] = {
    1: Level("cm"), 2: Level("lstm-small", mix=True), 3: Level("lstm-wide", mix=True), 4: Level("gpt-wide", mix=True),
    5: Level("gpt-large", mix=True), **{n: Level("gpt-large", mix=True, adapt=True) for n in (6, 7, 8, 9)},
}
DEFAULT = 4  # what `lmzip compress` does without a level: the default model with counting mixed in


def measured() -> dict[int, dict]:
    """Each level's bits per byte and KB/s as benchmarks/speed.py measured them ({} where not measured)."""
    try:
        return {int(k): v for k, v in json.loads((registry.SHIPPED / "levels.json").read_text()).items()}
    except (OSError, ValueError):
        return {}
