"""Learning while coding: after each block of coded steps, encoder and decoder take the same
optimizer step on the block just coded, so both rebuild exactly the same sequence of models.

This is the one mode still in float32 (arithmetic 0, machine-bound): bit-identical training needs
the same starting weights, batches, operations, order, thread count and CPU kernels, so the header
records the machine and such a file decodes only where those kernels run (the codec checks the
content CRC32). The block layout depends only on the segment lengths and the step."""

from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F

from .settings import FINE_TUNE, FROM_SCRATCH, SCRATCH_GROUPS, SCRATCH_ROWS, AdaptConfig

__all__ = ["AdaptConfig", "Adapter", "FROM_SCRATCH", "FINE_TUNE", "SCRATCH_ROWS", "SCRATCH_GROUPS", "defaults"]


def defaults(scratch: bool) -> AdaptConfig:
    """The settings --adapt uses unless told otherwise: fine-tuning a trained model, or from scratch."""
    return FROM_SCRATCH if scratch else FINE_TUNE


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
