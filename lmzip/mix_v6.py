"""The match model of format versions 4-6 (kept so their files decode): each segment's own history.

The match model predicts that the text continues an earlier occurrence of its last MIN_MATCH
tokens; how far to trust it is learned online, per match length, from integer hit/try counts.
All of it is integer bookkeeping plus a few scalar float32 operations per row, so the encoder and
the decoder (which see the same tokens in the same order) compute the same rows bit for bit.
"""

from __future__ import annotations

import numpy as np

MIN_MATCH = 3  # tokens of context a match must share (with BPE ~9 bytes)
MAX_BUCKET = 31  # match lengths are bucketed as min(length, 31)


class MatchMixer:
    """Per-row match state and shared confidence counts for one batch of segments."""

    def __init__(self, toks: np.ndarray, lengths: np.ndarray):
        batch, self.toks = len(lengths), toks
        self.hist: list[list[int]] = [[] for _ in range(batch)]
        self.table: list[dict[tuple[int, ...], int]] = [{} for _ in range(batch)]
        self.ptr = np.full(batch, -1, dtype=np.int64)  # index in hist of the predicted next token
        self.length = np.zeros(batch, dtype=np.int64)
        self.hits = np.zeros(MAX_BUCKET + 1, dtype=np.int64)
        self.tries = np.zeros(MAX_BUCKET + 1, dtype=np.int64)
        self._pred = np.full(batch, -1, dtype=np.int64)

    def mix(self, t: int, rows: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """Raise each predicted token's probability to the learned confidence of its match length."""
        out = probs
        for k, r in enumerate(rows):
            p = int(self.ptr[r])
            self._pred[r] = self.hist[r][p] if p >= 0 else -1
            if p < 0:
                continue
            b = min(int(self.length[r]), MAX_BUCKET)
            w = np.float32(self.hits[b] + 1) / np.float32(self.tries[b] + 2)
            sym = self._pred[r]
            q = out[k, sym]
            x = w * (np.float32(1) - q) / (np.float32(1) - w)  # gives sym probability w after normalizing
            if x > q:
                if out is probs:
                    out = probs.copy()
                out[k, sym] = x
        return out

    def update(self, t: int, rows: np.ndarray) -> None:
        """Learn from the coded tokens: confidence counts, then extend or look up each row's match."""
        for r, tok in zip(rows, self.toks[rows, t], strict=True):
            tok = int(tok)
            h, pred = self.hist[r], int(self._pred[r])
            if pred >= 0:
                b = min(int(self.length[r]), MAX_BUCKET)
                self.tries[b] += 1
                hit = pred == tok
                self.hits[b] += hit
                if hit:
                    self.ptr[r] += 1
                    self.length[r] += 1
                else:
                    self.ptr[r], self.length[r] = -1, 0
            h.append(tok)
            if len(h) >= MIN_MATCH:
                key = tuple(h[-MIN_MATCH:])
                if self.ptr[r] < 0 and key in self.table[r]:
                    self.ptr[r], self.length[r] = self.table[r][key], MIN_MATCH
                self.table[r][key] = len(h)
            if self.ptr[r] >= len(h):  # cannot predict past what has been seen
                self.ptr[r], self.length[r] = -1, 0
