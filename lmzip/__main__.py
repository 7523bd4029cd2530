"""``python -m lmzip``."""

from .cli import main

main()
