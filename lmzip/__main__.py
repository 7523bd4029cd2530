"""``python -m lmzip``."""

from lmzip.cli.main import main

main()
