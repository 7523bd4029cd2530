"""Learning while coding: after each block of coded steps, encoder and decoder take the same
optimizer step on the block just coded, so both rebuild exactly the same sequence of models.

Bit-identical training needs the same starting weights, the same batches, the same operations in
the same order and the same thread count (codec.py applies the recorded settings); the block
layout below depends only on the segment lengths and the step, which both sides know."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class AdaptConfig:
    """What the header records about adaptation."""

    lr: float = 3e-4
    block: int = 32  # coded steps between two optimizer steps
    optimizer: str = "adam"


# Measured on alice29.txt (benchmarks/README.md): a trained model is fine-tuned with small steps on
# wide batches (the defaults above); seeded random weights learn faster with larger, more frequent
# steps over few long segments (more sequential optimizer steps: 2.86 bpb for lstm-nano).
FROM_SCRATCH = AdaptConfig(lr=3e-3, block=8)
SCRATCH_ROWS = 16  # segments side by side when learning from scratch
# One group by default: one model learns from every segment. Two groups are two models, each learning
# half the file, that take as many sequential steps as one (the rows, not the steps, are split), so on
# two cores they are no faster (alice29.txt: 15.9 against 15.5 s) and cost 3.044 against 2.861 bpb.
SCRATCH_GROUPS = 1


def defaults(scratch: bool) -> AdaptConfig:
    """The settings --adapt uses unless told otherwise: fine-tuning a trained model, or from scratch."""
    return FROM_SCRATCH if scratch else AdaptConfig()


class Adapter:
    """A private copy of the predictor that learns from every coded block."""

    def __init__(self, predictor, cfg: AdaptConfig):
        with torch.inference_mode(False):
            self.pred = copy.deepcopy(predictor)
            self.pred.eval()
            self.opt = torch.optim.Adam(self.pred.parameters(), lr=np.float32(cfg.lr).item())
        self.cfg = cfg

    def due(self, t: int) -> bool:
        """Whether an optimizer step follows coded step ``t``."""
        return (t + 1) % self.cfg.block == 0

    def learn(self, toks: np.ndarray, lengths: np.ndarray, t: int) -> None:
        """One step on steps t-block+1..t of every segment that has tokens there."""
        lo = t + 1 - self.cfg.block
        rows = np.flatnonzero(lengths > lo)
        y = toks[rows, lo : t + 1]
        x = np.empty_like(y)
        x[:, 1:] = y[:, :-1]
        x[:, 0] = toks[rows, lo - 1] if lo > 0 else self.pred.bos
        mask = (lo + np.arange(self.cfg.block))[None, :] < lengths[rows, None]
        with torch.inference_mode(False), torch.enable_grad():
            dev = next(self.pred.parameters()).device
            xt, yt = torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)
            m = torch.from_numpy(mask.astype(np.float32)).to(dev)
            self.pred.train()
            logits = self.pred(xt)
            loss = (F.cross_entropy(logits.flatten(0, 1), yt.flatten(), reduction="none") * m.flatten()).sum() / m.sum()
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            self.opt.step()
            self.pred.eval()
