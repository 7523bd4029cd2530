"""A counting context-mixing compressor (the paq/lpaq family) in exact integer arithmetic.

Where the neural half of lmzip knows language in general, this model counts what *this* stream did:
orders 0-5 and 8, words, sparse, record and column contexts, single pixels of a bilevel image and
the longest earlier match each predict every bit (lmzip.cm.body lists them, by cm version), logistic
mixers weigh them, APM stages correct the mix, and a 32-bit arithmetic coder codes the bit.

Determinism. The decoder must reproduce each of the encoder's probabilities exactly, on any
machine, or the stream is lost. So the coding path uses integers only: probabilities are 12/16/22-bit
integers, stretch/squash are tables built by integer interpolation from fixed integer knots, weights
are int32 with 16 fractional bits, learning rates are integer multipliers and shifts, and hashes are
32-bit values masked after every multiply (multipliers < 2^31, so no int64 product overflows).
There is no float anywhere in the loop, so fast-math, FMA contraction, vectorisation order or
thread count cannot change a result; the loop is single-threaded and compiled by numba (cache=True), without
reference counts (it allocates nothing: `jitcache.UNCOUNTED`).

Memory is fixed by the level (1..9): the tables of level L take `table_bytes(L)` at most (from cm version 15 a
short input's less: `table_bytes(L, 15, length)`), allocated before coding, plus the input/output buffers; a hostile
header cannot ask for more (see `format`).

Modules: `codec` (compress, decompress), `format` (the header and its checks), `body` (the context
models, their inputs and updates, the match model), `loop` (one byte and one bit of every model and the
mixers over them: what counting's loop and the mixed loop share), `model` (counting's tables and coding loop),
`mix` (the mixed loop: the language model's input and mixer beside `loop`'s; `walk` its walk over the sorted
vocabulary; `mix1` format 11's loop, cm version 1's models, kept to decode), `parts` (hashing, slots, mixer,
APM), `coder` (the arithmetic coder), `tables` (squash, stretch, rates), `jitcache` (clears numba's
cache when any of those changed).
The wing imports nothing of lmzip but `errors`.
"""

_EXPORTS = {"compress": "codec", "decompress": "codec", "table_bytes": "model", "DEFAULT_LEVEL": "format"}


def __getattr__(name: str):
    """Import a wing's export on first use, so importing one module of the wing loads no more."""
    import importlib

    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
