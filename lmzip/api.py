"""The Python API: compress/decompress/inspect and a reusable compressor that loads its model once."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from lmzip.coding import format as fmt


@dataclass
class Result:
    """What one compression produced, with the figures a user wants to see."""

    blob: bytes
    header: fmt.Header  # the first block's
    ideal_bits: float  # Σ -log2 p over the tokens under the coder's integer counts (header and flush excluded)
    headers: list[fmt.Header] = field(default_factory=list)  # every block's, in order

    @property
    def original_length(self) -> int:
        return sum(h.original_length for h in self.headers) if self.headers else self.header.original_length

    @property
    def bits_per_byte(self) -> float:
        """8 × compressed / original."""
        return 8 * len(self.blob) / max(1, self.original_length)


class LMCompressor:
    """A language-model compressor bound to one model (loaded once, reused for many inputs).

    ``options`` are those of ``Settings.make`` (mix, adapt, adapt_lr, adapt_steps, seed, segment,
    rows, groups, device, threads); ``jobs`` is how many groups code at once (threads). The model
    ``cm`` (or ``cm-1`` … ``cm-9``: its table size) codes by counting alone, with no network (lmzip.cm)."""

    def __init__(self, model: str | Path | None = None, jobs: int | None = None, **options):
        from lmzip.coding.settings import Settings
        from lmzip.models import registry

        level = counting_level(model)
        if level is not None:
            options["counting"] = level
        self.settings = Settings.make(**options)
        seed = self.settings.seed
        # seed: start from the preset ``model`` with seeded random weights instead of trained ones
        if level is not None:
            self.model = None
        elif seed is None:
            self.model = registry.load(model)
        else:
            self.model = registry.scratch(model or registry.DEFAULT_MODEL, seed)
        self.jobs = jobs
        if self.settings.adapt:
            from lmzip.coding.learn import check_adaptable

            check_adaptable(self.model.predictor)
        if self.settings.device != "cpu":
            _check_device(self.settings.device)

    def compress_ex(self, data: bytes, progress=None) -> Result:
        """Compress and return the blob with its headers and the bits the coder paid."""
        out = io.BytesIO()
        t = self.compress_stream(io.BytesIO(bytes(data)), out, progress, len(data))
        return Result(out.getvalue(), t.first, t.ideal_bits, t.headers)

    def compress_stream(self, src: BinaryIO, dst: BinaryIO, progress=None, total: int | None = None):
        """Read ``src`` block by block and write the .lmz frames to ``dst``; returns the stream's Totals
        (``progress(bytes done, bytes in all)``; ``total``: the input's size where known)."""
        from lmzip.coding import stream

        return stream.compress_stream(src, dst, self.model, self.settings, progress, self.jobs, total)

    def compress(self, data: bytes, progress=None) -> bytes:
        """bytes -> .lmz bytes."""
        return self.compress_ex(data, progress).blob

    def decompress(self, blob: bytes, progress=None) -> bytes:
        """.lmz bytes -> the original bytes (this compressor's model, or the one the file names)."""
        return decompress(blob, progress=progress, model=self.model, jobs=self.jobs, device=self.settings.device,
                          threads=self.settings.threads)


COUNTING = "cm"  # the model name that asks for counting alone


def counting_level(model: str | Path | None) -> int | None:
    """The counting level that a model name ``cm`` or ``cm-N`` asks for; None for a language model."""
    from lmzip import cm

    name = str(model) if model is not None else ""
    if name == COUNTING:
        return cm.DEFAULT_LEVEL
    if name.startswith(COUNTING + "-") and name[3:].isdigit() and 1 <= int(name[3:]) <= 9:
        return int(name[3:])
    return None


def inspect(blob: bytes) -> fmt.Header:
    """The header of an .lmz blob's first block, checked; no model and no torch needed."""
    return fmt.parse_header(blob)


def compress(data: bytes, model: str | Path | None = None, **kw) -> bytes:
    """Compress bytes with a model name or folder (default: the default shipped model)."""
    return LMCompressor(model, **kw).compress(data)


def decompress(blob: bytes, model=None, progress=None, jobs: int | None = None, device: str = "cpu",
               threads: int | None = None) -> bytes:
    """Decompress an .lmz blob; the model is found by the id the file records (or given).

    ``device`` runs the file's model there and ``threads`` sets the threads per process (any device
    and thread count give the same bytes)."""
    out = io.BytesIO()
    decompress_stream(io.BytesIO(blob), out, model, progress, jobs, device, len(blob), threads)
    return out.getvalue()


def decompress_stream(src: BinaryIO, dst: BinaryIO, model=None, progress=None, jobs: int | None = None,
                      device: str = "cpu", total: int | None = None, threads: int | None = None):
    """Decode the .lmz frames of ``src`` into ``dst`` block by block; returns the stream's Totals."""
    from lmzip.coding import stream

    if device != "cpu":
        _check_device(device)
    found: dict = {}

    def model_for(head: fmt.Header):
        key = (head.model_id, head.seed)
        if key not in found:
            from lmzip.models import registry

            if model is not None and not isinstance(model, (str, Path)) and model.model_id == head.model_id:
                found[key] = model
            else:
                hint = model if isinstance(model, (str, Path)) and head.seed is None else None
                found[key] = registry.find_by_id(head.model_id, head.model_name, hint, head.seed)
        return found[key]

    return stream.decompress_stream(src, dst, model_for, progress, jobs, device, total, threads)


def _check_device(device: str) -> None:
    """A clear error instead of torch's assertion when the device is not here."""
    import torch

    from lmzip.errors import LmzipError

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise LmzipError(f"device {device!r} is not available here (this torch has no usable CUDA GPU)")
    if not device.startswith(("cpu", "cuda")):
        raise LmzipError(f"unknown device {device!r} (cpu or cuda)")
