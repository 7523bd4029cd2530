"""lmzip: lossless compression with a language model's next-token predictions."""

import os as _os
from importlib import metadata as _metadata

# MKL's results may depend on memory alignment unless this is set before torch loads; it costs
# nothing and removes one way for the encoder and decoder to disagree (see codec.py).
_os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")

from lmzip.arith.jitdir import ensure_cache_dir as _ensure_cache_dir  # noqa: E402
from lmzip.coding.parallel import few_arenas as _few_arenas  # noqa: E402

_ensure_cache_dir()  # before numba loads: a read-only install or an unwritable home still compiles
_few_arenas()  # before torch starts its threads: two malloc arenas for all the threads

from lmzip.api import LMCompressor, Result, compress, decompress, inspect  # noqa: E402
from lmzip.errors import FormatError, IntegrityError, LmzipError, ModelNotFound  # noqa: E402

try:  # the version is written once, in pyproject.toml
    __version__ = _metadata.version("lmzip")
except _metadata.PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    __version__ = "0+unknown"
__all__ = ["LMCompressor", "Result", "compress", "decompress", "inspect", "LmzipError", "FormatError",
           "IntegrityError", "ModelNotFound", "__version__"]
