"""Trace how the mixed coder races counting, block by block, so give-up rules can be replayed offline.

For every block of every file (4 MiB blocks, as `lmzip compress` cuts them) the default's encoder runs
as it does (counting first, then the mixed coder under today's budget), in one process and one
thread, and this records: counting's payload, its cost profile and seconds; every group's bytes and,
after each coded step, how many of them were coded, into how many coder bytes, at what second; and
whether the group finished or gave up. `replay` then tells, for a rule deciding at a point of the
group whether to go on, what every file would have cost in bytes and in the mixed coder's seconds.

    .venv/bin/python benchmarks/mix_trace.py trace FILE... --out runs/mix-trace/part1.jsonl
    .venv/bin/python benchmarks/mix_trace.py replay runs/mix-trace/*.jsonl
"""

from __future__ import annotations

import argparse
import io
import json
import time
from pathlib import Path

import numpy as np


def trace(paths: list[str], out: Path, model_name: str) -> None:
    """Code every block of ``paths`` as the default does and write one JSON line per block."""
    from lmzip.api import LMCompressor
    from lmzip.coding import codec, mix, stream

    lm = LMCompressor(model_name, jobs=1, threads=1, mix=True)
    groups: list[dict] = []
    real = mix.GroupCoder.code

    def code(self, t, rows, counts):  # the real step, then where the group stands
        if not hasattr(self, "_trace"):
            text = self.race.budget.text if self.race is not None else 0  # CRLF folded: the bytes the model codes
            cold = self.race.budget.segments if self.race is not None else 0  # Budget's cold starts
            self._trace = {"bytes": getattr(self, "bytes", 0), "text": text, "cold": cold, "steps": [], "end": "done"}
            groups.append(self._trace)
        try:
            return real(self, t, rows, counts)
        except mix.OverBudget:
            self._trace["end"] = "over"
            raise
        finally:
            self._trace["steps"].append((getattr(self, "done", 0), int(self.state.coder[3]), time.perf_counter()))

    lm.compress(b"warm-up: the compiled loops load once " * 64)  # not counted in the first block's seconds
    mix.GroupCoder.code = code
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as f:
        for p in paths:
            data = Path(p).read_bytes()
            for i, (block, last) in enumerate(stream.blocks(io.BytesIO(data), lm.settings.block_size)):
                marks = np.zeros(mix.PROFILE, dtype=np.int64)
                t0 = time.perf_counter()
                counted = stream.counted_instead(block, lm.settings, i, last, marks)
                t1 = time.perf_counter()
                budget = None if counted is None else mix.Budget(len(counted[0]), marks if marks[-1] else None,
                                                                    len(block))
                groups.clear()
                try:
                    coded = codec.encode(block, lm.model, lm.settings, None, 1, block=i, last=last, budget=budget)
                except mix.Unmixable:
                    coded = None
                t2 = time.perf_counter()
                row = {"file": "/".join(Path(p).parts[-2:]), "block": i, "length": len(block),
                       "counted": None if counted is None else len(counted[0]), "marks": marks.tolist(),
                       "count_s": t1 - t0, "mixed": None if coded is None else len(coded[0]), "mixed_s": t2 - t1,
                       "groups": [{**g, "steps": [(d, o, round(s - t1, 4)) for d, o, s in g["steps"]]}
                                                      for g in groups]}
                f.write(json.dumps(row) + "\n")
                f.flush()
                print(f"{p} block {i}: counted {row['counted']} mixed {row['mixed']} "
                      f"({row['count_s']:.1f} s + {row['mixed_s']:.1f} s)", flush=True)


def decide(row: dict, start: tuple[int, int], lead: int, slack: int) -> tuple[int | None, float, bool]:
    """What a block costs under the rule "from ``start`` of the block on, the groups stepping together,
    give up once their bytes pass (100 - lead)% of what counting paid for the same bytes plus ``slack``"
    (lmzip.coding.mix.Race and Budget), replayed on its trace (whose groups ran one after another):
    (frame bytes, the mixed coder's seconds, whether the mixed frame was kept); None where the trace
    stopped before the rule would have."""
    from lmzip.coding.mix import Budget

    if row["counted"] is None or not row["groups"]:
        return (row["mixed"] or row["counted"] or row["length"]), row["mixed_s"], row["mixed"] is not None
    marks = np.asarray(row["marks"], dtype=np.int64)
    text = row["groups"][0]["text"]
    cold = row["groups"][0].get("cold", 0)  # the block's cold starts (traces before them: none)
    b = Budget(row["counted"], marks if marks[-1] else None, row["length"], text, start, lead, slack, segments=cold)
    groups, began = row["groups"], [0.0]
    for g in groups[:-1]:
        began.append(g["steps"][-1][2] if g["steps"] else began[-1])
    sizes = [g["bytes"] for g in groups]
    for k in range(max(len(g["steps"]) for g in groups)):
        at = [g["steps"][min(k, len(g["steps"]) - 1)] for g in groups]
        if b.over([o for _, o, _ in at], [d for d, _, _ in at], sizes):
            return row["counted"], sum(s - t0 for (_, _, s), t0 in zip(at, began, strict=True)), False
    if any(g["end"] == "over" for g in groups):  # gave up under the traced rule where this one goes on
        return None, row["mixed_s"], False
    mixed, counted = row["mixed"], row["counted"]
    return (min(mixed, counted) if mixed else counted), row["mixed_s"], bool(mixed and mixed < counted)


def replay(paths: list[str], rules: list[tuple]) -> None:
    """Each rule's total bytes, worst file against the traced run's, and the mixed coder's share of the time."""
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line.strip()]
    base: dict[str, int] = {}
    for r in rows:  # what the traced run wrote: the smaller frame
        base[r["file"]] = base.get(r["file"], 0) + min(n for n in (r["mixed"], r["counted"]) if n)
    total_base = sum(base.values())
    print(f"{len(base)} files, {len(rows)} blocks; the traced run wrote {total_base:,} bytes")
    for start, lead, slack in rules:
        sizes, secs, count_s, worst, slow = {}, 0.0, 0.0, (0.0, ""), []
        for r in rows:
            size, sec, kept = decide(r, start, lead, slack)
            if size is None:  # the trace stopped where this rule goes on: unknown, count it as the trace's
                size, sec, kept = r["counted"], r["mixed_s"], False
            sizes[r["file"]] = sizes.get(r["file"], 0) + size
            secs += sec
            count_s += r["count_s"]
            if not kept and sec > 2 * r["count_s"]:
                slow.append(f"{r['file']}#{r['block']} {sec / max(r['count_s'], 1e-9):.1f}x")
        for f, n in sizes.items():
            worst = max(worst, (100 * (n / base[f] - 1), f))
        print(f"from {start[0]}/{start[1]}, lead {lead:+d}%, slack {slack}: {sum(sizes.values()):,} bytes "
              f"({100 * (sum(sizes.values()) / total_base - 1):+.3f}%), worst file {worst[1]} {worst[0]:+.2f}%, "
              f"mixed {secs:.0f} s + counting {count_s:.0f} s; counted blocks over 2x counting's time: {len(slow)} "
              f"{' '.join(slow[:6])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("trace")
    t.add_argument("files", nargs="+")
    t.add_argument("--out", required=True)
    t.add_argument("--model", default="gpt-wide")
    r = sub.add_parser("replay")
    r.add_argument("traces", nargs="+")
    args = ap.parse_args()
    if args.cmd == "trace":
        trace(args.files, Path(args.out), args.model)
    else:
        rules = [((1, b), lead, slack) for b in (64, 32, 16) for lead in (-2, 0, 1, 2) for slack in (32, 64, 128)]
        replay(args.traces, rules)


if __name__ == "__main__":
    main()
