"""The language model and counting, mixed (format 11): a group's tokens coded bit by bit by lmzip.cm.hybrid.

This is the coder that `codec._lockstep` drives when a file mixes counting in: each step hands it the
model's exact counts for one token of every active segment, and it codes (or decodes) those tokens
through the counting models and its binary arithmetic coder instead of the range coder. The group's
payload is that coder's bytes. The tables are those of a counting level (the header records it).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from lmzip.errors import IntegrityError


@lru_cache(maxsize=4)
def _vocab(pieces: tuple[bytes, ...]):
    from lmzip.cm.hybrid import Vocab

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


@dataclass(frozen=True)
class Budget:
    """When a group of the mixed coder gives up on its block (the stream then keeps the block counted):
    once its bytes pass the whole counted payload's (``size``), or, from the first 16th of the group on,
    once they are not ahead of what counting paid for as many bytes of the block by ``lead`` percent
    (less ``slack`` bytes, which small blocks need) (``marks``: counting's profile, PROFILE lengths,
    over a block of ``length`` bytes; ``text``: the bytes the model codes, where CRLF folding made them
    fewer). The mixed coder is ~10x slower than counting, so where it only ties (text the model has not
    seen: Russian, Chinese, Japanese, code, tables, binaries) it stops early instead of coding the block
    to a narrow loss; replayed on traces of the 42 bench files and the kinds set (benchmarks/mix_trace.py),
    no block the mixed coder won was given up. Integers only: every machine decides alike."""

    size: int
    marks: np.ndarray | None = None
    length: int = 0
    text: int = 0
    start: tuple[int, int] = (1, 16)  # judged from this part of the group on (from a 64th on, Wikipedia's
    # XML header made enwik5's group give up a block the model wins by 24%)
    lead: int = 1  # percent below counting's cost the group must keep
    slack: int = 64  # bytes

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

    def over(self, out: int, done: int, group: int) -> bool:
        """Whether a group of ``group`` bytes, ``done`` of them coded into ``out`` bytes, gives up."""
        if out > self.size:
            return True
        if self.marks is None or not self.length or done * self.start[1] < self.start[0] * group:
            return False
        return out * 100 > (100 - self.lead) * self.counted(done) + 100 * self.slack


class GroupCoder:
    """One group's mixed coder: `code(t, rows, counts)` as codec._lockstep calls it."""

    def __init__(self, model, lengths: np.ndarray, level: int, original_length: int,
                 payload: bytes | None = None, known: np.ndarray | None = None, budget: Budget | None = None):
        from lmzip.cm import hybrid

        self.h, self.v = hybrid, vocab_of(model.tokenizer, outputs(model))
        self.encoding, self.known, self.budget = payload is None, known, budget
        if budget is not None:  # the group's bytes, and how many of them are coded
            size = self.v.slen[self.v.rank]  # token id -> its bytes
            self.size, self.done = size, 0
            self.bytes = sum(int(size[known[i, : lengths[i]]].sum()) for i in range(len(lengths)))
        self.state = hybrid.allocate(level, len(lengths), capacity(lengths, self.v, original_length),
                                     len(self.v.slen))
        if self.encoding:
            self.out, self.src = np.empty(4096, dtype=np.uint8), np.zeros(1, dtype=np.uint8)
        else:
            self.out, self.src = np.zeros(1, dtype=np.uint8), np.frombuffer(payload, dtype=np.uint8)
            hybrid.start(self.state, self.src)

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
        if self.budget is not None:
            self.done += int(self.size[want].sum())
            if self.budget.over(int(self.state.coder[3]), self.done, self.bytes):
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
    from lmzip.cm.hybrid import table_bytes

    seg, n = head.segment_length, head.n_segments
    per_group = -(-n // head.groups)
    cap = capacity(np.array([seg]), vocab_of(model.tokenizer, outputs(model)), head.original_length)
    return max(1, min(at_once, head.groups)) * table_bytes(head.mix_level, per_group, cap)
