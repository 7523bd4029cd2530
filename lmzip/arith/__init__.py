"""The arithmetic wing: how every number that reaches the range coder is made exact.

``exact`` states the rule (integers, or floats holding integers small enough that every sum is exact
in any order; only correctly rounded +, -, *, /, sqrt in a fixed order) and gives its building blocks:
fixed-point tables, quantized linear layers, the integer softmax. ``kernels`` runs their element-wise
steps compiled (numba), bit for bit like the torch references. ``detfloat`` is the deterministic
float64 that learning while coding is written in (arithmetics 2, 4 and 7). ``versions`` is the one table of
the arithmetics a header can name. It imports nothing else of lmzip.
"""

_EXPORTS = {"FRAC": "exact", "QLinear": "exact", "QNormLinear": "exact", "fixed": "exact", "div": "exact",
            "dmm": "detfloat", "dsum": "detfloat"}


def __getattr__(name: str):
    """Import a wing's export on first use, so importing one module of the wing loads no more."""
    import importlib

    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
