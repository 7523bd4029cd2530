"""The benchmark wing: every compressor behind one interface, measured the same way.

``compressors`` holds the ``Compressor`` interface and the name -> compressor registry (lmzip's models,
gzip, bzip2, xz, zstd, brotli, PPMd); ``runner`` codes each file, decompresses and compares it, and
measures time and memory; ``report`` writes the tables and plots. It sits on ``lmzip.api``.
"""

_EXPORTS = {"Compressor": "compressors", "build": "compressors", "suite_names": "compressors", "run": "runner"}


def __getattr__(name: str):
    """Import a wing's export on first use, so importing one module of the wing loads no more."""
    import importlib

    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
