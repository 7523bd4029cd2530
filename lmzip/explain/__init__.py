"""The explainer wing: what the coder paid for every token, and why.

``analysis`` replays the coder's own quantized probabilities (the costs add up to the coded size),
finds surprising spans, compares two models and measures cost against context position; ``view``
renders that as terminal text, an HTML page and plots. It sits on ``lmzip.coding``.
"""

_EXPORTS = {"explain": "analysis", "compare": "analysis", "html_page": "view", "terminal_text": "view"}


def __getattr__(name: str):
    """Import a wing's export on first use, so importing one module of the wing loads no more."""
    import importlib

    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
