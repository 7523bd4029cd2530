"""The command line: a thin click layer that parses, calls the wings below and prints.

``main`` holds ``lmzip compress / decompress / test / list / models``; ``io`` the options compress and
decompress share (one ``IoOptions``, each command's own help texts) and the gzip-like loop over the inputs;
``bench``, ``explain`` and ``train`` one command each; ``views`` the ``list`` and ``models`` tables and the
``-v`` line; ``ui`` the console helpers (progress, error lines) and ``guard``, the error/Ctrl-C/broken-pipe
wrapper every command runs in; ``gzip_style`` the gzip-like ``lmzip -d/-t/-l`` front end; ``aliases``
``unlmz``/``lmzcat``. Nothing outside this wing imports click or prints.
"""

from lmzip.cli.aliases import lmzcat, unlmz
from lmzip.cli.main import main

__all__ = ["lmzcat", "main", "unlmz"]
