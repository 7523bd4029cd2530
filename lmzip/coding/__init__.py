"""The coding wing: bytes in, a verified bitstream out, and back.

``codec`` is the encoder and the decoder as mirror images; ``settings`` every coding option with its
defaults; ``format`` the ``.lmz`` container (header, CRCs) and ``coder`` the range-coder glue, neither
of which imports torch; ``mix`` counting mixed into the model, bit by bit (format 11); ``legacy``
what formats 8-10 laid out and coded otherwise (their header layouts, the token match model their mix
flag stands for); ``learn`` learning while
coding in deterministic float64; ``parallel`` segment groups side by side in threads; ``transform`` the
reversible input transforms. It uses ``lmzip.models`` and ``lmzip.arith``, never the wings above.
"""

_EXPORTS = {"encode": "codec", "decode": "codec", "Settings": "settings", "AdaptConfig": "settings",
            "Header": "format", "unpack": "format", "Encoder": "coder", "Decoder": "coder"}


def __getattr__(name: str):
    """Import a wing's export on first use, so importing one module of the wing loads no more."""
    import importlib

    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
