"""The Python API: compress/decompress/inspect and a reusable compressor that loads its model once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import format as fmt


@dataclass
class Result:
    """What one compression produced, with the figures a user wants to see."""

    blob: bytes
    header: fmt.Header
    ideal_bits: float  # Σ -log2 p over the tokens: the model's cross-entropy on this input

    @property
    def bits_per_byte(self) -> float:
        """8 × compressed / original."""
        return 8 * len(self.blob) / max(1, self.header.original_length)


class LMCompressor:
    """A language-model compressor bound to one model (loaded once, reused for many inputs)."""

    def __init__(self, model: str | Path | None = None, device: str = "cpu", threads: int = 1,
                 segment: int | None = None, jobs: int | None = None, mix: bool = False, adapt=None,
                 seed: int | None = None, dtype: str | None = None, rows: int | None = None):
        from . import codec, registry

        # seed: start from the preset ``model`` with seeded random weights instead of trained ones
        self.model = registry.load(model) if seed is None else registry.scratch(model or registry.DEFAULT_MODEL, seed)
        dtype = dtype or codec.default_dtype(device, adapt is not None)
        self.settings = codec.Settings(device=device, threads=threads, dtype=dtype, mix=mix, adapt=adapt)
        if seed is not None:  # learning from scratch: unless told otherwise, few long segments in one group
            from .adapt import SCRATCH_GROUPS, SCRATCH_ROWS

            rows = SCRATCH_ROWS if rows is None and segment is None else rows
            jobs = SCRATCH_GROUPS if jobs is None else jobs
        self.segment, self.jobs, self.rows = segment, jobs, rows
        if device != "cpu":
            self.model.predictor.to(device)

    def compress_ex(self, data: bytes, progress=None) -> Result:
        """Compress and return the blob with its header and the model's ideal bits."""
        from . import codec

        blob, head, bits = codec.encode(bytes(data), self.model, self.settings, progress, self.segment, self.jobs,
                                        self.rows)
        return Result(blob, head, bits)

    def compress(self, data: bytes, progress=None) -> bytes:
        """bytes -> .lmz bytes."""
        return self.compress_ex(data, progress).blob

    def decompress(self, blob: bytes, progress=None) -> bytes:
        """.lmz bytes -> the original bytes (this compressor's model, or the one the file names)."""
        return decompress(blob, progress=progress, model=self.model, jobs=self.jobs)


def inspect(blob: bytes) -> fmt.Header:
    """The header of an .lmz blob, checked; no model and no torch needed."""
    return fmt.unpack(blob)[0]


def compress(data: bytes, model: str | Path | None = None, **kw) -> bytes:
    """Compress bytes with a model name or folder (default: the default shipped model)."""
    return LMCompressor(model, **kw).compress(data)


def decompress(blob: bytes, model=None, progress=None, jobs: int | None = None) -> bytes:
    """Decompress an .lmz blob; the model is found by the id the file records (or given)."""
    head, payload = fmt.unpack(blob)
    if head.stored:
        return fmt.verify(head, payload)
    from . import codec, registry

    if model is not None and not isinstance(model, (str, Path)) and model.model_id == head.model_id:
        loaded = model
    else:
        hint = model if isinstance(model, (str, Path)) and head.seed is None else None
        loaded = registry.find_by_id(head.model_id, head.model_name, hint, head.seed)
    if head.device != "cpu":
        loaded.predictor.to(head.device)
    return codec.decode(head, payload, loaded, progress, jobs)
