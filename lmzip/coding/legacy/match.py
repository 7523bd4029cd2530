"""Mixing the language model with an online match model over everything already coded.

Segments are coded side by side, so at step t the first t tokens of every segment of a group are
known to both sides. The match model indexes all of them by their last 8, 4 and 2 tokens and, where
the text being coded repeats earlier text, predicts the token that followed it there; positions are
global (segment r, step s -> r * seg + s), so a match runs on across segment boundaries. A small
logistic mixer in fixed point (as in paq) learns online how far to trust the match against the
language model's own probability. It reads and writes the model's integer counts (lmzip.arith.exact), and
all of it is integer arithmetic, so every machine computes the same rows.
"""

from __future__ import annotations

import numpy as np

# Chosen by replaying gpt-wide's rows on eight Calgary/Canterbury files (benchmarks/mix_replay.py,
# ideal bits): one order of 3 at rate 6 gave 2.67 bits per byte on average, these settings 2.41.
ORDERS = (8, 4, 2)  # tokens of context a match must share: the longest found wins
START = (1 << 15, 1 << 16, 0)  # start weights (16.16) of the model's and the match's stretched p, bias
MAX_LENGTH = 15  # match lengths (tokens) beyond this share the last mixer context
_LIMIT = 1023  # confidence counts are halved past this many tries, so they keep adapting
_RATE = 24  # mixer learning rate
# 4096 / (1 + e^(-x/256)) at x = -2048, -1920, ..., 2048: the logistic function in 12-bit fixed point
_SQUASH = (1, 2, 4, 6, 10, 17, 27, 45, 74, 120, 194, 311, 488, 747, 1102, 1546, 2048, 2550, 2994, 3349, 3608,
           3785, 3902, 3976, 4022, 4051, 4069, 4079, 4086, 4090, 4092, 4094, 4095)


def squash(d: int) -> int:
    """Stretch units (1/256 of a logit) -> probability in 1/4096, by integer interpolation."""
    if d > 2047:
        return 4095
    if d < -2047:
        return 1
    w, i = d & 127, (d >> 7) + 16
    return (_SQUASH[i] * (128 - w) + _SQUASH[i + 1] * w + 64) >> 7


def _stretch_table() -> list[int]:
    table, lo = [2047] * 4096, 0
    for d in range(-2047, 2048):
        v = squash(d)
        for p in range(lo, v + 1):
            table[p] = d
        lo = max(lo, v + 1)
    return table


_STRETCH = _stretch_table()


def stretch(p: int) -> int:
    """The inverse of squash: probability in 1/4096 -> stretch units."""
    return _STRETCH[p]


class Mixer:
    """Logistic mixing of stretched probabilities with one weight set per context (fixed point)."""

    def __init__(self, contexts: int, weights: tuple[int, ...]):
        self.w = [list(weights) for _ in range(contexts)]  # 16.16 fixed point

    def predict(self, ctx: int, x: tuple[int, ...]) -> int:
        """The mixed probability (1/4096) that the event happens."""
        return min(max(squash(sum(w * v for w, v in zip(self.w[ctx], x, strict=True)) >> 16), 1), 4095)

    def learn(self, ctx: int, x: tuple[int, ...], p: int, hit: bool) -> None:
        """One gradient step on the coding cost of what happened."""
        err = ((hit << 12) - p) * _RATE
        w = self.w[ctx]
        for i, v in enumerate(x):
            w[i] += (v * err + 0x8000) >> 16


class MatchMixer:
    """Match state per segment, one index over the group's coded tokens, confidence and mixer."""

    def __init__(self, toks: np.ndarray, lengths: np.ndarray):
        self.toks, self.lengths, self.seg = toks, lengths, toks.shape[1]
        self.index: dict[tuple[int, ...], int] = {}  # last n tokens (n in ORDERS) -> position of the next one
        self.ptr = [-1] * len(lengths)  # global position each segment's match predicts next
        self.length = [0] * len(lengths)  # tokens the match has predicted right in a row
        self.hits, self.tries = [0] * (MAX_LENGTH + 1), [0] * (MAX_LENGTH + 1)
        self.mixer = Mixer(MAX_LENGTH + 1, START)
        self.pending: dict[int, tuple[int, int, tuple[int, int, int], int]] = {}

    def _token_at(self, g: int, t: int) -> int:
        """The token at global position g, or -1 if it is not coded by step t (it lies at t or later)."""
        r, s = divmod(g, self.seg)
        return int(self.toks[r, s]) if r < len(self.lengths) and s < t and s < self.lengths[r] else -1

    def mix(self, t: int, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Give each matched row's predicted token the mixer's probability; the other tokens share the
        rest in proportion to their counts. ``counts`` [n, V] (float32 integers) sum to 2^24 - V per row."""
        out, self.pending = counts, {}
        total = (1 << 24) - counts.shape[1]
        for k, r in enumerate(rows.tolist()):
            g = self.ptr[r]
            if g < 0:
                continue
            sym = self._token_at(g, t)
            if sym < 0:
                self.ptr[r], self.length[r] = -1, 0
                continue
            b = min(self.length[r], MAX_LENGTH)
            c = int(out[k, sym])
            conf = ((self.hits[b] + 1) << 12) // (self.tries[b] + 2)
            x = (stretch(min(max(c * 4096 // total, 1), 4095)), stretch(conf), 256)
            p = self.mixer.predict(b, x)
            self.pending[r] = (sym, b, x, p)
            rest = total - c
            if rest > 0:  # the others share total - p/4096 of it, in proportion; the token gets what is left
                if out is counts:
                    out = counts.copy()
                row = out[k].astype(np.int64) * (total - p * total // 4096) // rest  # < 2^48: exact
                row[sym] = 0
                row[sym] = total - row.sum()
                out[k] = row
        return out

    def update(self, t: int, rows: np.ndarray) -> None:
        """Learn from the tokens just coded at step t, then extend, drop or find each row's match."""
        found = []
        for r in rows.tolist():
            tok = int(self.toks[r, t])
            if r in self.pending:
                sym, b, x, p = self.pending[r]
                hit = sym == tok
                self.mixer.learn(b, x, p, hit)
                self.tries[b] += 1
                self.hits[b] += hit
                if self.tries[b] > _LIMIT:
                    self.tries[b] //= 2
                    self.hits[b] //= 2
                self.ptr[r], self.length[r] = (self.ptr[r] + 1, self.length[r] + 1) if hit else (-1, 0)
            for n in ORDERS:  # (for t + 1 < n the context would reach into the last segment's unknown end)
                if t + 1 >= n:
                    key = tuple(self.toks[r, t + 1 - n : t + 1].tolist())
                    if self.ptr[r] < 0 and key in self.index:
                        self.ptr[r], self.length[r] = self.index[key], n
                    found.append((key, r * self.seg + t + 1))
        for key, g in found:  # only now: an entry made at this step points at a token not coded yet
            self.index[key] = g
