"""The Python API: compress/decompress/inspect and a reusable compressor that loads its model once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lmzip.coding import format as fmt


@dataclass
class Result:
    """What one compression produced, with the figures a user wants to see."""

    blob: bytes
    header: fmt.Header
    ideal_bits: float  # Σ -log2 p over the tokens under the coder's integer counts (header and flush excluded)

    @property
    def bits_per_byte(self) -> float:
        """8 × compressed / original."""
        return 8 * len(self.blob) / max(1, self.header.original_length)


class LMCompressor:
    """A language-model compressor bound to one model (loaded once, reused for many inputs).

    ``options`` are those of ``Settings.make`` (mix, adapt, adapt_lr, adapt_block, seed, segment,
    rows, groups, device, threads); ``jobs`` is how many processes code groups at once."""

    def __init__(self, model: str | Path | None = None, jobs: int | None = None, **options):
        from lmzip.coding.settings import Settings
        from lmzip.models import registry

        self.settings = Settings.make(**options)
        seed = self.settings.seed
        # seed: start from the preset ``model`` with seeded random weights instead of trained ones
        self.model = registry.load(model) if seed is None else registry.scratch(model or registry.DEFAULT_MODEL, seed)
        self.jobs = jobs
        if self.settings.device != "cpu":
            _check_device(self.settings.device)

    def compress_ex(self, data: bytes, progress=None) -> Result:
        """Compress and return the blob with its header and the bits the coder paid."""
        from lmzip.coding import codec

        blob, head, bits = codec.encode(bytes(data), self.model, self.settings, progress, self.jobs)
        return Result(blob, head, bits)

    def compress(self, data: bytes, progress=None) -> bytes:
        """bytes -> .lmz bytes."""
        return self.compress_ex(data, progress).blob

    def decompress(self, blob: bytes, progress=None) -> bytes:
        """.lmz bytes -> the original bytes (this compressor's model, or the one the file names)."""
        return decompress(blob, progress=progress, model=self.model, jobs=self.jobs, device=self.settings.device)


def inspect(blob: bytes) -> fmt.Header:
    """The header of an .lmz blob, checked; no model and no torch needed."""
    return fmt.unpack(blob)[0]


def compress(data: bytes, model: str | Path | None = None, **kw) -> bytes:
    """Compress bytes with a model name or folder (default: the default shipped model)."""
    return LMCompressor(model, **kw).compress(data)


def decompress(blob: bytes, model=None, progress=None, jobs: int | None = None, device: str = "cpu") -> bytes:
    """Decompress an .lmz blob; the model is found by the id the file records (or given).

    ``device`` runs the file's model there (any device gives the same bytes)."""
    head, payload = fmt.unpack(blob)
    if head.stored:
        return fmt.verify(head, payload)
    from lmzip.coding import codec
    from lmzip.models import registry

    if model is not None and not isinstance(model, (str, Path)) and model.model_id == head.model_id:
        loaded = model
    else:
        hint = model if isinstance(model, (str, Path)) and head.seed is None else None
        loaded = registry.find_by_id(head.model_id, head.model_name, hint, head.seed)
    if device != "cpu":
        _check_device(device)
    return codec.decode(head, payload, loaded, progress, jobs, device)


def _check_device(device: str) -> None:
    """A clear error instead of torch's assertion when the device is not here."""
    import torch

    from lmzip.errors import LmzipError

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise LmzipError(f"device {device!r} is not available here (this torch has no usable CUDA GPU)")
    if not device.startswith(("cpu", "cuda")):
        raise LmzipError(f"unknown device {device!r} (cpu or cuda)")
