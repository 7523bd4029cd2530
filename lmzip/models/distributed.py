"""Data-parallel training under torchrun (DDP: gloo on CPU, nccl on GPU), detected from the environment.

``torchrun --nproc_per_node=N -m lmzip train ...`` sets RANK, WORLD_SIZE and LOCAL_RANK; lmzip.models.train
asks this module what to do with them, so the command line is the same with or without torchrun.

What stays the same whatever the number of ranks: every rank draws the whole global batch of a step (the
same seed, the same rows: cheap, it is indices) and keeps its own contiguous rows of it; each rank's loss is
scaled so that DDP's average of the gradients is the gradient of the global batch's mean loss; the state of
the batches and of an LSTM's streams is kept for the global batch (an LSTM's per-row state is gathered for a
checkpoint). So a checkpoint is the global state, a run resumes with any number of ranks, and 1 and N ranks
follow the same trajectory up to the order of floating-point sums. Rank 0 alone writes files.

Apart from torchrun, ``pair_plan`` lets two separate training processes (two models trained side by side
on one device) agree on one step count through files in a folder they share.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from lmzip.errors import LmzipError


@dataclass(frozen=True)
class Ranks:
    """This process's place in the run: rank of world (one process: 0 of 1) and the device it trains on."""

    rank: int = 0
    world: int = 1
    local: int = 0
    device: str = "cpu"

    @property
    def main(self) -> bool:
        """Whether this rank writes checkpoints, logs, plots and the model (rank 0)."""
        return self.rank == 0

    def rows(self, batch: int) -> slice:
        """This rank's contiguous rows of a global batch (sizes differ by at most one)."""
        return slice(batch * self.rank // self.world, batch * (self.rank + 1) // self.world)

    @contextlib.contextmanager
    def first(self) -> Iterator[None]:
        """Rank 0 runs the block before the others (it fills a cache they then read, with no race)."""
        if self.world > 1 and not self.main:
            dist.barrier()
        yield
        if self.world > 1 and self.main:
            dist.barrier()

    def mean(self, value: torch.Tensor) -> float:
        """The sum over ranks of a scaled loss: the global batch's mean (what a single process would log)."""
        if self.world > 1:
            value = value.detach().clone()
            dist.all_reduce(value)
        return float(value.item())

    def same(self, what: str, text: str) -> None:
        """Refuse to train when the ranks disagree on ``text`` (e.g. a tokenizer learned apart on each)."""
        if self.world > 1:
            digests: list = [None] * self.world
            dist.all_gather_object(digests, hashlib.sha256(text.encode()).hexdigest())
            if len(set(digests)) > 1:
                raise LmzipError(f"the {self.world} ranks disagree on the {what}; start from a run folder that "
                                 "holds it (e.g. one step on one process)")

    def gather_rows(self, state: tuple[torch.Tensor, ...] | None) -> tuple[torch.Tensor, ...] | None:
        """An LSTM's state of this rank's rows ([layers, rows, hidden]) joined into the global batch's."""
        if self.world == 1 or state is None:
            return state
        parts: list = [None] * self.world
        dist.all_gather_object(parts, tuple(s.detach().cpu() for s in state))
        return tuple(torch.cat([p[i] for p in parts], 1) for i in range(len(state)))

    def local_rows(self, state: tuple[torch.Tensor, ...] | None, batch: int) -> tuple[torch.Tensor, ...] | None:
        """This rank's rows of a global LSTM state (one read from a checkpoint)."""
        return state if state is None else tuple(s[:, self.rows(batch)] for s in state)

    def shard(self, x: torch.Tensor, y: torch.Tensor, reset: np.ndarray) -> tuple:
        """This rank's rows of a global batch (x, y, reset)."""
        r = self.rows(len(x))
        return x[r], y[r], reset[r]

    def finish(self) -> None:
        """Wait for every rank (rank 0 has written the model) and leave the process group."""
        if self.world > 1 and dist.is_initialized():
            dist.barrier()
            dist.destroy_process_group()


def from_env() -> Ranks:
    """RANK, WORLD_SIZE and LOCAL_RANK as torchrun sets them (absent: one process)."""
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank, local = int(os.environ.get("RANK", "0")), int(os.environ.get("LOCAL_RANK", "0"))
    except ValueError as e:
        raise LmzipError(f"RANK/WORLD_SIZE/LOCAL_RANK are not numbers: {e}") from e
    return Ranks(rank, world, local)


def setup(device: str, batch: int) -> Ranks:
    """Join torchrun's process group when there is one; each rank takes GPU LOCAL_RANK on a cuda device."""
    r = from_env()
    if r.world == 1:
        return Ranks(device=device)
    if batch < r.world:
        raise LmzipError(f"--batch {batch} is smaller than the {r.world} ranks: each rank needs a row")
    cuda = device.startswith("cuda")
    if cuda:  # one GPU per rank, whatever index the command named
        device = f"cuda:{r.local}"
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        try:  # generous timeout: the other ranks wait in the next step's all-reduce while rank 0 validates
            dist.init_process_group("nccl" if cuda else "gloo", timeout=datetime.timedelta(hours=1))
        except (RuntimeError, ValueError) as e:  # e.g. WORLD_SIZE set without torchrun's MASTER_ADDR
            raise LmzipError(f"cannot join the {r.world} ranks (WORLD_SIZE is set; start with torchrun): "
                             f"{str(e).splitlines()[0]}") from e
    return Ranks(r.rank, r.world, r.local, device)


class _Step(torch.nn.Module):
    """One forward as DDP sees it: (x, LSTM state or None) -> (logits, new state or None). DDP syncs
    gradients only for what goes through its forward, and the LSTM trains through forward_state."""

    def __init__(self, model: torch.nn.Module, stateful: bool):
        super().__init__()
        self.model, self.stateful = model, stateful

    def forward(self, x: torch.Tensor, state=None):
        return self.model.forward_state(x, state) if self.stateful else (self.model(x), None)


def wrap(model: torch.nn.Module, stateful: bool, ranks: Ranks) -> torch.nn.Module:
    """The model's training forward, under DDP when there are several ranks (same parameters, not a copy)."""
    step = _Step(model, stateful)
    if ranks.world == 1:
        return step
    from torch.nn.parallel import DistributedDataParallel

    ids = [ranks.local] if ranks.device.startswith("cuda") else None
    return DistributedDataParallel(step, device_ids=ids)


def plan_file(folder: Path, name: str, partner: str) -> Path:
    """The file in which ``pair_plan`` records the plan of the pair ``name`` and ``partner`` (either order)."""
    return folder / f"plan-{'+'.join(sorted((name, partner)))}.json"


def pair_plan(name: str, partner: str, rate: float, folder: Path, deadline: float, *, done: int, least: int,
              fill: float = 1.0, wait: float = 90) -> int:
    """One step count for two processes training side by side: the first to know both speeds writes the plan."""
    # each writes its speed (steps a second) and waits up to ``wait`` s for its partner's; the plan is ``done``
    # steps plus what the slower runs by ``deadline`` (a time.time()) times ``fill``, never below ``least``
    (folder / f"rate-{name}.tmp").write_text(json.dumps(rate))
    os.replace(folder / f"rate-{name}.tmp", folder / f"rate-{name}.json")  # never seen half-written
    theirs, plan = folder / f"rate-{partner}.json", plan_file(folder, name, partner)
    start = time.time()
    while not theirs.exists() and not plan.exists() and time.time() < start + wait:
        time.sleep(0.2)
    if not plan.exists():
        rates = [rate] + ([json.loads(theirs.read_text())] if theirs.exists() else [])
        steps = max(least, int(done + min(rates) * (deadline - time.time()) * fill))
        tmp = folder / f"plan-{name}.tmp"
        tmp.write_text(json.dumps({"steps": steps, "steps_per_s": rates,
                                   "deadline_s": round(deadline - time.time(), 1)}))
        try:
            os.link(tmp, plan)  # atomic: exactly one of the two plans becomes the pair's
        except FileExistsError:
            pass
        tmp.unlink()
    return int(json.loads(plan.read_text())["steps"])
