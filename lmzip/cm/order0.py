"""Cm version 28: an adaptive order-0 model alone, what the encoder writes instead of a level's models where it codes
the input smaller (bytes drawn independently: random letters, base64 of compressed data; a mixer over a level's
~170 inputs pays ~0.3% there for the noise of its weights). Each byte is coded as eight bits down a binary tree of
255 nodes (the bits so far, ``c0``); node c0 predicts P(1) = (2 n1 + 1) / (2 (n0 + n1) + 2), n0 and n1 the 0s and 1s
it saw (Krichevsky-Trofimov: for every stationary source within ~log2(n)/2 bits a node of what knowing it would
cost), in 16 bits, 1..65535; counts are never halved (int64: a 4 GiB block fits). On the Canterbury random.txt (64
letters drawn alike): a 75,057-byte payload against level 7's 75,263 (lmzip.cm.codec.compress chooses)."""

from __future__ import annotations

import numpy as np
from numba import njit

from lmzip.cm.coder import decode_bit, encode_bit, flush, new_state, start_decoder
from lmzip.cm.jitcache import UNCOUNTED


@njit(cache=True, inline="always")
def _p(n0: int, n1: int) -> int:
    """Node's P(1) in 16 bits from its counts (KT), kept codable."""
    p = ((2 * n1 + 1) << 16) // (2 * (n0 + n1) + 2)
    return min(max(p, 1), 65535)


@njit(**UNCOUNTED)
def _code(encode, src, buf, n, st, out, counts):
    """Bytes 0 … n - 1 coded (encoding: read from ``buf``; decoding: written there from ``src``; ``counts``: each node's
    0s and 1s, zeros at the start); the payload's length, or -1 where the encoder's output had no room for a byte."""
    for i in range(n):
        if encode and st[3] + 16 > out.shape[0]:  # a byte writes at most 8 x 16 bits' worth: stop before it could
            return -1
        c0 = 1
        for j in range(8):
            p = _p(counts[c0, 0], counts[c0, 1])
            if encode:
                y = (np.int64(buf[i]) >> (7 - j)) & 1
                encode_bit(st, out, y, p)
            else:
                y = decode_bit(st, src, p)
            counts[c0, y] += 1
            c0 = (c0 << 1) | y
        if not encode:
            buf[i] = c0 & 0xFF
    if encode:
        flush(st, out)
        return st[3]
    return n


def _counts() -> np.ndarray:
    """Every node's counts, none seen."""
    return np.zeros((256, 2), dtype=np.int64)


def encode(data: np.ndarray, room: int | None = None) -> np.ndarray:
    """The payload of ``data`` (uint8) under the order-0 model (``room``: the output buffer's first size; where a
    payload outgrows it, coded again in twice the room)."""
    buf = np.array(data, dtype=np.uint8)
    room = len(buf) + len(buf) // 8 + 1024 if room is None else room  # KT: ~8 bits a byte + ~log2(n)/2 + 1 a node
    while True:
        out = np.empty(room, dtype=np.uint8)
        used = _code(True, np.zeros(1, dtype=np.uint8), buf, len(buf), new_state(), out, _counts())
        if used >= 0:
            return out[:used]
        room *= 2


def decode(payload: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` bytes of an order-0 payload."""
    src, buf, st = np.array(payload, dtype=np.uint8), np.empty(n, dtype=np.uint8), new_state()
    start_decoder(st, src)
    _code(False, src, buf, n, st, buf, _counts())
    return buf
