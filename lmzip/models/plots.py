"""Training curves as PNG files (matplotlib, without a display)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any


def plot_history(history: list[dict[str, Any]], path: Path, title: str) -> None:
    """Training loss (bits per token) and validation bits per byte against step (and per kind, for a mix)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    steps = [h["step"] for h in history]
    ax.plot(steps, [h["loss"] / math.log(2) for h in history], lw=0.8, label="train (bits/token)")
    v = [h for h in history if "valid_bpb" in h]
    ax2 = ax.twinx()
    ax2.plot([h["step"] for h in v], [h["valid_bpb"] for h in v], "o-", color="C1", label="valid (bits/byte)")
    kinds = [h for h in v if h.get("valid_kinds")]
    for i, kind in enumerate(kinds[0]["valid_kinds"] if kinds else []):
        ax2.plot([h["step"] for h in kinds], [h["valid_kinds"][kind] for h in kinds], ".--", lw=0.7,
                 color=f"C{(i + 2) % 10}", label=f"valid {kind}")
    ax.set_xlabel("step")
    ax.set_ylabel("train bits per token")
    ax2.set_ylabel("validation bits per byte")
    ax.set_title(title)
    fig.legend(loc="upper right", fontsize="small", ncol=2 if kinds else 1)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
