"""The language model and counting, mixed (formats 11 and 12): a group's tokens coded bit by bit by lmzip.cm.mix.

This is the coder that `codec._lockstep` drives when a file mixes counting in: each step hands it the
model's exact counts for one token of every active segment, and it codes (or decodes) those tokens
through the counting models and its binary arithmetic coder instead of the range coder. The group's
payload is that coder's bytes. The tables are those of a counting level and cm version (the header records both).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lmzip.coding.settings import LEAD, MIX_VERSION
from lmzip.errors import IntegrityError


@lru_cache(maxsize=4)
def _vocab(pieces: tuple[bytes, ...]):
    from lmzip.cm.mix import Vocab

    return Vocab.of(list(pieces))


class Unmixable(ValueError):
    """A model whose tokens cannot be coded by their bytes (lmzip.coding.stream then counts the block)."""


def vocab_of(tokenizer, outputs: int | None = None):
    """The vocabulary of a model with ``outputs`` outputs (default: the tokenizer's ids), sorted by
    bytes: ids past the tokenizer's have no bytes, ids past the model's do not exist here.
    Unmixable where two tokens have the same bytes or none has any."""
    n = tokenizer.vocab_size if outputs is None else outputs
    pieces = tuple(tokenizer.token_bytes(i) if i < tokenizer.vocab_size else b"" for i in range(n))
    named = [p for p in pieces if p]
    if not named or len(set(named)) < len(named):
        raise Unmixable("this model's tokens cannot be coded by their bytes (two alike, or none): it cannot mix "
                        "counting in")
    return _vocab(pieces)


def outputs(model) -> int:
    """How many tokens the model predicts (its count rows' width)."""
    return int(model.predictor.config.vocab_size)


def capacity(lengths: np.ndarray, vocab, original_length: int) -> int:
    """Bytes the buffer keeps per segment: no segment can hold more (its tokens, or the whole block)."""
    return int(min(int(lengths.max()) * vocab.sbytes.shape[1], original_length)) + 2


class OverBudget(Exception):
    """The encoder's bytes passed its budget: another frame of the block is smaller, or will be."""


PROFILE = 64  # the counted block's cost profile: its payload's length after every 64th of the block
# A block the tokenizer cuts into tokens of under SHORT (2/3) of the bytes per token of the model's own
# training text is text the model has seen little like: code, markup, tables, binaries, other scripts.
# Over the 42 bench files and the kinds set the mixed coder won no such block (the shortest tokens it won
# on: xargs.1 2.26 and paper6 2.28 bytes per token; its training text 3.12, so 2.08 here), and it gave
# them up only after 1/16 of the block or later, at 2-9x counting's time (benchmarks/results/floor.md).
SHORT = (2, 3)


def token_bytes(model) -> int:
    """The least bytes per 100 tokens a block needs for ``model`` to be tried on it (0: no record of its
    training text's, so every block is tried)."""
    per = (getattr(model, "meta", None) or {}).get("training", {}).get("bytes_per_token")
    return int(100 * per * SHORT[0] / SHORT[1]) if per else 0


# bytes of slack a cold start: each segment starts the model without context, a cost paid at once where counting's is
# spread, and recouped over ~COLD_SPAN bytes of text. With cm version 26 mixed in, the first 64 KB of bible.txt (80
# segments): 976 bytes at the 16th against counting's 909, 11,695 against 13,772 at the end; of enwik5 (Wikipedia's XML
# header first; 64 segments): 1,374 against 1,272 at the 16th, 12,856 against 17,890 (the rule before gave both up;
# enwik5's with version 11 mixed in too); enwik4 (10 KB, 11 segments): 803 against 747 at its 39%, 1,912 against 3,056
COLD, COLD_SPAN = 10, 2048


def cold_starts(segments: int, text: int) -> int:
    """The cold starts a block's ``segments`` over ``text`` bytes pay for: one a segment, one per COLD_SPAN at most."""
    return min(segments, text // COLD_SPAN)


@dataclass(frozen=True)
class Budget:
    """When the mixed coder gives up on a block (the stream then keeps the block counted): once the
    groups' bytes together pass the whole counted payload's (``size``), or, from the first 16th of the
    block on, once they are not ahead of what counting paid for the same bytes of the block by ``lead``
    percent (less ``slack`` bytes, which small blocks need). Each group is held against counting's cost
    over its own stretch of the block (``marks``: counting's profile, PROFILE lengths, over a block of
    ``length`` bytes; ``text``: the bytes the model codes, where CRLF folding made them fewer): a later
    group starts its counting models cold where counting alone had learned the block so far, and pays
    for it (calgary/news: the second of two groups 54% behind counting at its 16th, the first 6% ahead).
    The mixed coder is ~10x slower than counting, so where it only ties (text the model has not seen:
    Russian, Chinese, Japanese, code, tables, binaries) it stops early instead of coding the block to a
    narrow loss; replayed on traces of the 42 bench files and the kinds set (benchmarks/mix_trace.py),
    no block the mixed coder won was given up. Integers only: every machine decides alike."""

    size: int
    marks: np.ndarray | None = None
    length: int = 0
    text: int = 0
    start: tuple[int, int] = (1, 16)  # judged from this part of the block on (from a 64th on, Wikipedia's
    # XML header made enwik5's group give up a block the model wins by 24%)
    lead: int = LEAD  # percent below counting's cost the groups must keep (Settings.lead)
    slack: int = 64  # bytes
    segments: int = 0  # the block's cold starts (`cold_starts`): COLD bytes of slack each
    token_bytes: int = 0  # the least bytes per 100 tokens the model is tried on (0: every block; ``short``)
    trial: list | None = None  # a trial: stop at the judging point, appending whether the groups were ahead

    def short(self, n_bytes: int, n_tokens: int) -> bool:
        """Whether the block's tokens are too short for the model to be tried at all (``token_bytes``)."""
        return 100 * n_bytes < self.token_bytes * n_tokens

    def counted(self, done: int) -> int:
        """Counting's payload after ``done`` bytes of the text, read off its profile (interpolated) where
        as many of the block's bytes lie."""
        k, n = len(self.marks), self.length
        if self.text:
            done = done * n // self.text
        pos = min(done, n) * k
        j, frac = divmod(pos, n)
        lo = 0 if j == 0 else int(self.marks[j - 1])
        hi = int(self.marks[min(j, k - 1)])
        return lo + (hi - lo) * frac // n

    def over(self, outs: list[int], dones: list[int], groups: list[int]) -> bool:
        """Whether groups of ``groups`` bytes each, ``dones`` of them coded into ``outs`` bytes, give up."""
        out = sum(outs)
        if out > self.size:
            return self._verdict(behind=True)
        if self.marks is None or not self.length or sum(dones) * self.start[1] < self.start[0] * sum(groups):
            return False
        paid, at = 0, 0
        for done, group in zip(dones, groups, strict=True):
            paid += self.counted(at + done) - self.counted(at)
            at += group
        return self._verdict(behind=out * 100 > (100 - self.lead) * paid + 100 * (self.slack + COLD * self.segments))

    def _verdict(self, behind: bool) -> bool:
        """Whether to give up, once judged: where behind, or, in a trial, in any case (recording the verdict)."""
        if self.trial is not None:
            self.trial.append(not behind)
            return True
        return behind


class Race:
    """A block's groups under one budget, stepping together: each codes one step, then waits for the
    others (at most ``workers`` compute at once, so one core takes them in turns), and the budget judges
    them all after every round. The rounds make the verdict the same however the threads are scheduled,
    and a block's losing group is seen at its 16th, not after the groups before it ran to their end."""

    def __init__(self, budget: Budget, groups: int, workers: int):
        self.budget, self.alive, self.arrived, self.round, self.given_up = budget, groups, 0, 0, False
        self.outs, self.dones, self.sizes = [0] * groups, [0] * groups, [0] * groups
        self.holding = [False] * groups
        self.turns, self.cond = threading.Semaphore(max(1, workers)), threading.Condition()

    def join(self, i: int, size: int) -> None:
        """Group ``i`` of ``size`` bytes starts: it waits for a turn to compute."""
        self.sizes[i] = size
        self.turns.acquire()
        self.holding[i] = True

    def arrive(self, i: int, out: int, done: int) -> bool:
        """Group ``i`` coded a step (``done`` bytes into ``out``): waits for the round's end, and for a
        turn to compute the next step; True where the block is given up."""
        self.holding[i] = False
        self.turns.release()
        with self.cond:
            self.outs[i], self.dones[i] = out, done
            self.arrived += 1
            now = self.round
            if self.arrived >= self.alive:
                self._end_round()
            else:
                self.cond.wait_for(lambda: self.round != now)
            if self.given_up:
                return True
        self.turns.acquire()
        self.holding[i] = True
        return False

    def leave(self, i: int) -> None:
        """Group ``i`` is done (finished, gave up or failed): the rounds go on without it."""
        if self.holding[i]:
            self.holding[i] = False
            self.turns.release()
        with self.cond:
            self.alive -= 1
            if self.alive and self.arrived >= self.alive:
                self._end_round()

    def _end_round(self) -> None:
        self.given_up = self.given_up or self.budget.over(self.outs, self.dones, self.sizes)
        self.arrived, self.round = 0, self.round + 1
        self.cond.notify_all()


class GroupCoder:
    """One group's mixed coder: `code(t, rows, counts)` as codec._lockstep calls it."""

    def __init__(self, model, lengths: np.ndarray, level: int, original_length: int,
                 payload: bytes | None = None, known: np.ndarray | None = None,
                 race: tuple[Race, int] | None = None, version: int = MIX_VERSION):
        from lmzip.cm import mix

        self.h, self.v = mix, vocab_of(model.tokenizer, outputs(model))
        self.encoding, self.known = payload is None, known
        self.race, self.group = race if race is not None else (None, 0)
        if self.race is not None:  # the group's bytes, and how many of them are coded
            size = self.v.slen[self.v.rank]  # token id -> its bytes
            self.size, self.done = size, 0
            self.bytes = sum(int(size[known[i, : lengths[i]]].sum()) for i in range(len(lengths)))
        self.state = mix.allocate(level, len(lengths), capacity(lengths, self.v, original_length),
                                  len(self.v.slen), version)
        if self.encoding:
            self.out, self.src = np.empty(4096, dtype=np.uint8), np.zeros(1, dtype=np.uint8)
        else:
            self.out, self.src = np.zeros(1, dtype=np.uint8), mix.start(self.state, payload)
        if self.race is not None:
            self.race.join(self.group, self.bytes)

    def code(self, t: int, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Code the tokens of ``rows`` at step ``t`` (encoding: from ``known``) and return them."""
        toks = self.known[rows, t].copy() if self.encoding else np.zeros(len(rows), dtype=np.int64)
        want = toks.copy()
        self.out = self.h.step(self.encoding, self.state, self.v, np.ascontiguousarray(rows, dtype=np.int64),
                               counts, toks, self.out, self.src)
        if self.state.shared[1]:
            raise IntegrityError("corrupt data (a segment decoded to more bytes than it can hold)")
        if self.encoding and not np.array_equal(toks, want):  # a token of no bytes cannot be coded this way
            raise Unmixable("a token could not be coded by its bytes")
        if self.race is not None:
            self.done += int(self.size[want].sum())
            if self.race.arrive(self.group, int(self.state.coder[3]), self.done):
                raise OverBudget
        if not self.encoding and self.state.coder[3] > len(self.src) + 16:
            raise IntegrityError("corrupt data (the coded bytes ran out before the last token)")
        return toks

    def finish(self) -> bytes:
        """The encoder's bytes (its interval's first byte ends the stream)."""
        from lmzip.cm.coder import flush

        st = self.state.coder
        if st[3] + 1 > self.out.shape[0]:
            self.out = np.concatenate([self.out, np.zeros(16, dtype=np.uint8)])
        flush(st, self.out)
        return self.out[: st[3]].tobytes()


def memory(head, model, at_once: int) -> int:
    """Bytes that ``at_once`` groups of a mixed frame hold together for their counting tables and buffers."""
    from lmzip.cm.mix import table_bytes

    seg, n = head.segment_length, head.n_segments
    per_group = -(-n // head.groups)
    cap = capacity(np.array([seg]), vocab_of(model.tokenizer, outputs(model)), head.original_length)
    return max(1, min(at_once, head.groups)) * table_bytes(head.mix_level, per_group, cap, head.mix_version or 1)
