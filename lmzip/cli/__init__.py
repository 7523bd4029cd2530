"""The command line: a thin click layer that parses, calls the wings below and prints.

``main`` holds ``lmzip compress / decompress / list / models`` and the gzip-like options; ``bench``,
``explain`` and ``train`` one command group each; ``views`` the ``list`` and ``models`` tables; ``ui``
the console helpers (progress, colours); ``gzip_style`` the gzip-like ``lmzip -d/-t/-l`` front end and
``unlmz``/``lmzcat``. Nothing outside this wing imports click or prints.
"""

from lmzip.cli.gzip_style import lmzcat, unlmz
from lmzip.cli.main import main

__all__ = ["lmzcat", "main", "unlmz"]
