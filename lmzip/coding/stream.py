"""Inputs of any size: the input is cut into blocks of ``settings.block_size`` bytes and each block is
coded as one frame (lmzip.coding.format), written before the next is read, so neither side holds more
than one block. The same input, model and options give the same frames on every machine; a damaged
frame is reported by its block number. Frames arrive in order and the last one says so, so a file
cut at a frame boundary is "truncated", never a shorter success. Files may be concatenated: the
frames of ``cat a.lmz b.lmz`` decode to the bytes of both.

    compress_stream(src, dst, model, settings)     # mirror images
    decompress_stream(src, dst, model_for)
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from lmzip.coding import counting, parallel, transform
from lmzip.coding.format import read_frames, verify
from lmzip.coding.header import Header
from lmzip.coding.settings import Settings
from lmzip.coding.source import read_full
from lmzip.errors import LmzipError

if TYPE_CHECKING:  # the codec (and torch with it) is imported only where a model codes
    from lmzip.coding.mix import Budget
    from lmzip.models.checkpoint import LoadedModel

Progress = Callable[[int, int], None]  # (bytes done, bytes in all; the latter grows where unknown)


@dataclass
class Totals:
    """What a stream of blocks came to."""

    original: int = 0
    compressed: int = 0
    ideal_bits: float = 0.0
    headers: list[Header] = field(default_factory=list)  # every frame's header, in order
    nodes: list[str] = field(default_factory=list)  # the Ray node of every block, in order (--ray only)

    @property
    def first(self) -> Header:
        return self.headers[0]

    def record(self, head: Header, original: int, compressed: int, bits: float = 0.0) -> None:
        """Count one block that was written."""
        self.original += original
        self.compressed += compressed
        self.ideal_bits += bits
        self.headers.append(head)


def blocks(src: BinaryIO, size: int) -> Iterator[tuple[bytes, bool]]:
    """The input in blocks of ``size`` bytes, each with whether it is the last (one byte of look-ahead;
    an empty input is one empty block)."""
    carry = b""
    while True:
        data = carry + read_full(src, size - len(carry))
        carry = src.read(1) if len(data) == size else b""
        yield data, not carry
        if not carry:
            return


def compress_stream(src: BinaryIO, dst: BinaryIO, model: LoadedModel | None, settings: Settings,
                    progress: Progress | None = None, workers: int | None = None,
                    total: int | None = None) -> Totals:
    """Code ``src`` block by block into ``dst``; ``total``, where known, is the input's size (progress)."""
    out = Totals()
    for i, (data, last) in enumerate(blocks(src, settings.block_size)):
        blob, head, bits = _encode(data, model, settings, _within(progress, out.original, len(data), total),
                                   workers, block=i, last=last)
        dst.write(blob)
        out.record(head, len(data), len(blob), bits)
        if progress:
            progress(out.original, max(total or 0, out.original))
    return out


def decompress_stream(src: BinaryIO, dst: BinaryIO, model_for: Callable[[Header], LoadedModel],
                      progress: Progress | None = None, workers: int | None = None, device: str = "cpu",
                      total: int | None = None, threads: int | None = None) -> Totals:
    """The mirror image of ``compress_stream``: decode, check and write each block in turn.
    ``model_for(header)`` finds the model of a coded block; ``total`` is the file's size, where known;
    ``threads``: intra-op threads per process (default: the cores, shared by the processes)."""
    out = Totals()
    for head, payload in read_frames(src, check=_payload_length):
        size = head.size + len(payload)
        data = decode_frame(head, payload, model_for, _within(progress, out.compressed, size, total), workers,
                            device, threads)
        dst.write(data)
        out.record(head, len(data), size)
        if progress:
            progress(out.compressed, max(total or 0, out.compressed))
    return out


def decode_frame(head: Header, payload: bytes, model_for: Callable[[Header], LoadedModel] | None,
                 progress: Progress | None = None, workers: int | None = None, device: str = "cpu",
                 threads: int | None = None) -> bytes:
    """One frame's checked bytes (an error names the block where the file has several)."""
    try:
        if head.stored:
            return verify(head, payload)
        if head.counting:
            return counting.decode(head, payload, progress)
        from lmzip.coding import codec

        return codec.decode(head, payload, model_for(head), progress, workers, device, threads)
    except LmzipError as e:
        if head.block > 0 or not head.last:
            raise type(e)(f"block {head.block}: {e}") from e
        raise


def _payload_length(head: Header, payload: bytes) -> int | None:
    """The length of the counting payload that ``payload`` begins with, for a format-10 short frame, which
    records none: decoded (and checked), then coded again, which gives the very bytes the encoder wrote
    (None where they do not decode, or are not the start of ``payload``)."""
    from lmzip import cm
    from lmzip.cm import format as cmfmt
    from lmzip.coding import short

    try:
        data = counting.decode(head, payload)
    except LmzipError:
        return None
    again = cm.compress(data, short.level_of(head), version=head.counted_by)[cmfmt.HEADER_BYTES :]
    return len(again) if payload[: len(again)] == again else None


TINY = 64  # with mix, a block counting codes below 1/TINY of its bytes (0.125 bits per byte) stays counted: the
# mixed coder could gain at most those bytes, at ~10x counting's time (100 KB of zeros: 53 bytes, 72 s mixed)


def _encode(data: bytes, model: LoadedModel | None, settings: Settings, progress: Progress | None,
            workers: int | None, block: int, last: bool) -> tuple[bytes, Header, float]:
    """One block's frame: counting (and what it stores) without the codec and torch, the rest by the codec."""
    if settings.counting:  # the whole input in one block: a short frame (lmzip.coding.short)
        # as codec.encode: random data is stored without running a model (level None)
        level = None if transform.looks_random(data) else settings.counting
        return counting.encode(data, level, progress, block == 0 and last, block=block,
                               block_size=settings.block_size, last=last)
    from lmzip.coding import codec

    if not settings.mix:
        return codec.encode(data, model, settings, progress, workers, block=block, last=last)
    # the mixed coder is not tried on a block of short tokens (mix.SHORT): counted once, as a frame kept is;
    # otherwise counting first (~10x faster), and a group of the mixed coder gives up once its bytes pass what
    # counting paid for as many bytes (by a margin), or the whole counted frame's
    from lmzip.cm import mix
    from lmzip.coding.mix import PROFILE, Budget, Unmixable, token_bytes

    parallel.give_back()  # what the block before freed, before counting's tables take fresh pages
    tokenized = None if transform.looks_random(data) else codec.tokenize(data, model)
    if tokenized is None or codec.too_short(tokenized, model):  # random data is stored, as codec.encode does
        if progress:
            progress(1, 1)
        return counted_instead(data, settings, block, last, kept=True)
    # a first run: the mixed loop compiles in a child meanwhile
    mix.compile_beside(parallel.available_memory(), parallel.default_workers())
    marks = np.zeros(PROFILE, dtype=np.int64)
    counted = counted_instead(data, settings, block, last, marks)
    if counted is not None and len(counted[0]) * TINY <= len(data):  # nothing left for the model to win
        if progress:
            progress(1, 1)
        return counted_kept(data, settings, block, last, counted)
    budget = None if counted is None else Budget(len(counted[0]), marks if marks[-1] else None, len(data),
                                                 lead=settings.lead, token_bytes=token_bytes(model))
    if budget is not None and settings.trial and not _trial_ahead(data, settings, budget, workers, block, last):
        if progress:
            progress(1, 1)
        return counted_kept(data, settings, block, last, counted)

    try:
        coded = codec.encode(data, model, settings, progress, workers, block=block, last=last, budget=budget,
                             tokenized=tokenized)
    except Unmixable:  # a model whose tokens are not byte strings (an imported one, perhaps): counting alone
        coded = None
    if coded is None or counted is not None and len(counted[0]) <= len(coded[0]):
        if progress:
            progress(1, 1)
        return counted_kept(data, settings, block, last, counted)
    # the mixed frame beat the light pass: unless by far, a small block is counted as a kept one is too, the smaller
    # frame kept (with cm version 26 mixed in, book2's mixed frame beat -1's count, 127,911 bytes, and lost to version
    # 26's, 117,287)
    if counted is None or len(coded[0]) * FAR[1] < len(counted[0]) * FAR[0]:
        return coded
    strong = counted_kept(data, settings, block, last, counted)
    return strong if strong is not None and len(strong[0]) < len(coded[0]) else coded


def _trial_ahead(data: bytes, settings: Settings, budget: Budget, workers: int | None, block: int, last: bool) -> bool:
    """Whether the faster model of ``settings.trial``, mixed as the default mixes it, is ahead of counting where
    the budget first judges (a slow level's coder, learning while coding, would take many times counting's
    time to reach that point on a block it then gives up)."""
    from dataclasses import replace

    from lmzip.coding import codec
    from lmzip.coding.mix import Unmixable
    from lmzip.models import registry

    verdict: list[bool] = []
    trial = Settings.make(mix=True, device=settings.device, threads=settings.threads, block_size=settings.block_size,
                          lead=settings.lead)
    try:
        coded = codec.encode(data, registry.load(settings.trial), trial, None, workers, block=block, last=last,
                             budget=replace(budget, trial=verdict))
    except Unmixable:
        return False
    return verdict[0] if verdict else coded is not None and len(coded[0]) < budget.size


# a mixed frame under FAR of the light count is kept without the heavy one: over the 42 bench files version 26's count
# is 0.90-0.95 of -1's on every text the mixed coder wins (under 0.9 only where it never wins: fax pages, a
# spreadsheet, code, binaries; world192's gazetteer in blocks over 1 MiB, counted heavily anyway); the heavy count took
# -4's compressing speed on alice29.txt from 15 to 8 KB/s (its mixed frame 0.74 of -1's count), -2's from 21 to 10
# (0.86)
FAR = (9, 10)


def counted_instead(data: bytes, settings: Settings, block: int, last: bool, marks: np.ndarray | None = None,
                    kept: bool = False) -> tuple[bytes, Header, float] | None:
    """With mix: the block counted alone (Settings.counted_for), which the stream keeps where it is the
    smaller frame (a block the language model barely knows: a binary, a table; or one so small that a
    short frame's header decides, stored or counted); ``marks``: filled with counting's cost profile;
    ``kept``: counted as a frame the stream keeps is (Settings.recount_for), not as the budget's yardstick."""
    level, version = (kept and settings.recount_for(len(data))) or settings.counted_for(len(data))
    if transform.looks_random(data):  # random data is stored, as codec.encode does
        level = None
    return counting.encode(data, level, None, block == 0 and last, marks, version=version, block=block,
                           block_size=settings.block_size, last=last)


def counted_kept(data: bytes, settings: Settings, block: int, last: bool,
                 counted: tuple[bytes, Header, float] | None) -> tuple[bytes, Header, float] | None:
    """With mix, where the stream keeps counting's frame or the mixed frame beat the light pass: a block whose first
    pass counted it lighter (a small one, Settings.counted_for) counted again as a large block is
    (Settings.recount_for), the smaller count kept. The light pass is the mixed coder's fast yardstick; the frame
    kept is weighed against the heavy models."""
    if counted is None or settings.recount_for(len(data)) is None or transform.looks_random(data):
        return counted
    gc.collect()  # the mixed coder's groups (a give-up's traceback holds their frames), then their memory back
    parallel.give_back()
    strong = counted_instead(data, settings, block, last, kept=True)
    return strong if len(strong[0]) < len(counted[0]) else counted


def _within(progress: Progress | None, before: int, size: int, total: int | None) -> Progress | None:
    """A block's own progress (tokens done of its tokens) as bytes of the whole stream."""
    if progress is None:
        return None

    def report(done: int, of: int) -> None:
        progress(before + size * done // max(1, of), max(total or 0, before + size))

    return report
