"""One `Compressor` interface for everything the benchmark measures, and the name -> object registry.

A classic compressor needs no model (model_bytes = 0); an lmzip model is one more entry, built
from the installed model folders. Add a compressor by adding one class and one registry entry.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
from collections.abc import Callable
from dataclasses import dataclass

from lmzip.errors import LmzipError


class Compressor:
    """name, settings, model_bytes, compress(bytes) -> bytes, decompress(bytes) -> bytes."""

    name: str = ""
    settings: str = ""
    model_bytes: int = 0
    model_id: str | None = None  # a language model's id (lmzip.models.checkpoint): which weights were measured
    # language models also report their cross-entropy on the last input: (ideal bits, tokens)
    last_ideal: tuple[float, int] | None = None

    def compress(self, data: bytes) -> bytes:
        raise NotImplementedError

    def decompress(self, blob: bytes) -> bytes:
        raise NotImplementedError


class Gzip(Compressor):
    name, settings = "gzip", "-9"

    def compress(self, data: bytes) -> bytes:
        return gzip.compress(data, 9, mtime=0)

    def decompress(self, blob: bytes) -> bytes:
        return gzip.decompress(blob)


class Bzip2(Compressor):
    name, settings = "bzip2", "-9"

    def compress(self, data: bytes) -> bytes:
        return bz2.compress(data, 9)

    def decompress(self, blob: bytes) -> bytes:
        return bz2.decompress(blob)


class Xz(Compressor):
    name, settings = "xz", "-9e"

    def compress(self, data: bytes) -> bytes:
        return lzma.compress(data, preset=9 | lzma.PRESET_EXTREME)

    def decompress(self, blob: bytes) -> bytes:
        return lzma.decompress(blob)


class Zstd(Compressor):
    """zstd -19, or --ultra -22 --long (window 2^27) when ``ultra``."""

    def __init__(self, ultra: bool = False):
        import zstandard

        self.name = "zstd-ultra" if ultra else "zstd"
        self.settings = "--ultra -22 --long=27" if ultra else "-19"
        params = zstandard.ZstdCompressionParameters.from_level(22 if ultra else 19, enable_ldm=ultra,
                                                                window_log=27 if ultra else 0)
        self._c = zstandard.ZstdCompressor(compression_params=params)
        self._d = zstandard.ZstdDecompressor(max_window_size=1 << 27)

    def compress(self, data: bytes) -> bytes:
        return self._c.compress(data)

    def decompress(self, blob: bytes) -> bytes:
        return self._d.decompress(blob)


class Brotli(Compressor):
    name, settings = "brotli", "-q 11 (window 24)"

    def compress(self, data: bytes) -> bytes:
        import brotli

        return brotli.compress(data, quality=11, lgwin=24)

    def decompress(self, blob: bytes) -> bytes:
        import brotli

        return brotli.decompress(blob)


class Ppmd(Compressor):
    """PPMd variant H (pyppmd Ppmd7) of a given order, 256 MiB; fed in 64 KiB pieces.

    One encode() call over ~1 MB sometimes produced an undecodable stream (see shared notes);
    64 KiB pieces avoid it, and the round-trip check in the benchmark would catch a recurrence.
    The decoder needs the original length, stored as a 4-byte prefix."""

    PIECE = 1 << 16

    def __init__(self, order: int):
        self.order, self.name, self.settings = order, f"ppmd-o{order}", f"order {order}, 256 MiB (pyppmd)"

    def compress(self, data: bytes) -> bytes:
        import pyppmd

        enc = pyppmd.Ppmd7Encoder(self.order, 256 << 20)
        out = [struct.pack("<I", len(data))]
        for i in range(0, len(data), self.PIECE):
            out.append(enc.encode(data[i : i + self.PIECE]))
        out.append(enc.flush())
        return b"".join(out)

    def decompress(self, blob: bytes) -> bytes:
        import pyppmd

        (n,) = struct.unpack_from("<I", blob)
        dec = pyppmd.Ppmd7Decoder(self.order, 256 << 20)
        return dec.decode(blob[4:], n)


class CM(Compressor):
    """lmzip's counting context-mixing model (lmzip.cm): orders 0-6, words, sparse, match; integer-exact."""

    def __init__(self, level: int | None = None):
        from lmzip import cm

        self.level = cm.DEFAULT_LEVEL if level is None else level
        self.name, self.settings = "cm", f"-L{self.level}"
        self._cm = cm

    def compress(self, data: bytes) -> bytes:
        return self._cm.compress(data, self.level)

    def decompress(self, blob: bytes) -> bytes:
        return self._cm.decompress(blob)


class LMZip(Compressor):
    """An installed lmzip model (Transformer or LSTM): static, mixed with counting, adaptive."""

    def __init__(self, model: str, device: str = "cpu", mix: bool = False, adapt: bool = False):
        from lmzip.api import LMCompressor
        from lmzip.models import registry

        path, cfg = registry.available()[model]
        self.name = model + ("+adapt" if adapt else "") + ("+mix" if mix else "")
        m = cfg.get("model", {})
        arch = f"{m.get('arch')} {m.get('n_layer')}x{m.get('n_embd')}"
        self.settings = (f"{arch}, {cfg.get('tokenizer')} {m.get('vocab_size')}" + (", +counting" if mix else "")
                         + (", learns while coding" if adapt else ""))
        self.model_bytes = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
        self._c = LMCompressor(model, device=device, mix=mix, adapt=adapt, threads=1)  # one core each, as the others
        self.model_id = self._c.model.id_hex

    @property
    def block_size(self) -> int:
        """The bytes of one block (one frame): lmzip codes larger inputs block by block."""
        return self._c.settings.block_size

    def in_blocks_of(self, size: int) -> None:
        """Code in blocks of ``size`` bytes (`lmzip bench --block-size`; shown in the settings)."""
        from dataclasses import replace

        from lmzip.coding.settings import Settings

        if size != self.block_size:
            self._c.settings = replace(self._c.settings, block_size=Settings.make(block_size=size).block_size)
            self.settings += f", blocks of {size:,} bytes"

    def compress(self, data: bytes) -> bytes:
        res = self._c.compress_ex(data)
        self.last_ideal = (res.ideal_bits, sum(h.n_tokens for h in res.headers))  # every block's
        return res.blob

    def decompress(self, blob: bytes) -> bytes:
        return self._c.decompress(blob)


class Scratch(LMZip):
    """A preset with seeded random weights that learns the file from scratch (no model file at all),
    with the settings `lmzip compress --adapt --seed` uses (lmzip.coding.settings.FROM_SCRATCH)."""

    def __init__(self, preset: str, seed: int = 0):
        from lmzip.api import LMCompressor
        from lmzip.coding.settings import FROM_SCRATCH
        from lmzip.models import registry

        m = registry.PRESETS[preset].model
        self.name, self.model_bytes = f"{preset}+scratch", 0
        self.settings = (f"{m['arch']} {m['n_layer']}x{m['n_embd']}, random weights (seed {seed}), "
                         f"learns from scratch (lr {FROM_SCRATCH.lr:g}, every {FROM_SCRATCH.steps} steps)")
        self._c = LMCompressor(preset, adapt=True, seed=seed, threads=1)  # its defaults: lmzip.coding.settings
        self.model_id = self._c.model.id_hex


@dataclass(frozen=True)
class Entry:
    """A registry entry: how to build the compressor, whether it is a language model, and whether
    only the full suite runs it unnamed (learning while coding, ~4x slower; the legacy models)."""

    build: Callable[[], Compressor]
    lm: bool = False
    full_only: bool = False


CLASSIC: dict[str, Entry] = {
    "gzip": Entry(Gzip),
    "bzip2": Entry(Bzip2),
    "xz": Entry(Xz),
    "zstd": Entry(lambda: Zstd(False)),
    "zstd-ultra": Entry(lambda: Zstd(True)),
    "brotli": Entry(Brotli),
    "ppmd-o6": Entry(lambda: Ppmd(6)),
    "ppmd-o8": Entry(lambda: Ppmd(8)),
    "cm": Entry(CM),
}


def registry() -> dict[str, Entry]:
    """Every compressor by name: the classic ones, then every installed lmzip model."""
    from lmzip.models import registry as models

    out = dict(CLASSIC)
    installed = list(models.available())  # reads every config.json: once
    modes = [("", {}), ("+mix", {"mix": True}), ("+adapt", {"adapt": True}),
             ("+adapt+mix", {"mix": True, "adapt": True})]
    for suffix, kw in modes:
        for name in installed:
            out[name + suffix] = Entry(lambda n=name, kw=kw: LMZip(n, **kw), lm=True,
                                       full_only="adapt" in kw or name in models.LEGACY)
    for name in models.PRESETS:
        if models.PRESETS[name].tokenizer == "bytes":
            out[name + "+scratch"] = Entry(lambda n=name: Scratch(n), lm=True, full_only=True)
    return out


def suite_names(suite: str) -> list[str]:
    """The compressors a suite runs unnamed: ``full`` all of them, ``default`` the quick ones."""
    return [n for n, e in registry().items() if suite == "full" or not e.full_only]


def expected_model_id(name: str) -> str | None:
    """The id the compressor ``name`` will report, read from its model's config.json without loading it
    (None for the classic compressors and the seeded +scratch ones, whose id is known once built)."""
    from lmzip.models import registry as models

    base = name.split("+", 1)[0]
    installed = models.available()
    return installed[base][1].get("id") if base in installed and not name.endswith("+scratch") else None


def build(name: str, block_size: int | None = None) -> Compressor:
    """The compressor called ``name`` (an lmzip one in blocks of ``block_size`` bytes where given), or a
    one-line error listing the known names."""
    reg = registry()
    if name not in reg:
        raise LmzipError(f"unknown compressor {name!r} (known: {', '.join(reg)})")
    comp = reg[name].build()
    if block_size is not None and isinstance(comp, LMZip):
        comp.in_blocks_of(block_size)
    return comp
