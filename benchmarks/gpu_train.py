"""Train the shipped model pairs on one GPU inside a fixed time budget (issue 3).

One process per model, all on the same device, all finished by one deadline. The two models of a
pair are held to the same number of steps on the same token stream: each measures its speed during
the warm-up (whose learning rates do not depend on the step count), and the first of the two to
know both speeds writes the pair's plan: the cosine schedule's length that the slower model
finishes by the deadline. The run
is then the same as one started with that step count, which the model's config records.

    python benchmarks/gpu_train.py --budget 480 --out runs/gpu      # on a machine with a GPU
    python benchmarks/gpu_train.py --device cpu --batch 2 --budget 60 --out runs/gpu-dry  # a check

The training data are the same files as the CPU-trained models (../shared/corpora/train), read
through the default model's BPE tokenizer.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from common import ROOT
from frontier import BPE, TRAIN, VALID  # the same training files and BPE as every shipped model

PAIRS = {"gpt-wide": "lstm-wide", "lstm-wide": "gpt-wide", "gpt-large": "lstm-large", "lstm-large": "gpt-large"}
PROBE = (30, 130)  # steps between which speed is measured, inside the 200-step warm-up


def _tokenizer():
    from lmzip.models.tokenizer import tokenizer_from_json

    return tokenizer_from_json(BPE.read_text())


def _config(name: str, a: argparse.Namespace):
    from lmzip.models.registry import PRESETS
    from lmzip.models.train import TrainConfig

    return TrainConfig(model=dict(PRESETS[name].model), train=TRAIN, valid=VALID, out=f"{a.out}/{name}", name=name,
                       steps=1_000_000, batch=a.batch, lr=a.lr, eval_every=500, ckpt_every=500,
                       device=a.device, threads=1, extra={"preset": name, "gpu_train": True})


def _bf16_ok(model, device: str) -> bool:
    """Whether one autocast bf16 forward/backward runs (cuDNN's LSTM may not take bf16)."""
    import torch

    x = torch.zeros(2, 8, dtype=torch.long, device=device)
    try:  # the training step's own path: an LSTM carries its state over from the last batch
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16):
            model = model.to(device)
            if hasattr(model, "forward_state"):
                y, st = model.forward_state(x)
                y2, _ = model.forward_state(x, tuple(s.detach().float() for s in st))
                y = y.float() + y2.float()
            else:
                y = model(x).float()
            y.sum().backward()
        return True
    except RuntimeError as e:
        print(f"bf16 autocast failed ({e}); training in fp32", flush=True)
        return False


def worker(name: str, a: argparse.Namespace) -> None:
    """Train one model; set its step count from the pair's measured speed and the deadline."""
    import torch

    from lmzip.models.distributed import pair_plan, plan_file
    from lmzip.models.model import build_model, config_from_dict
    from lmzip.models.train import train

    cfg = _config(name, a)
    cfg.bf16 = _bf16_ok(build_model(config_from_dict(cfg.model)), a.device)
    if a.device.startswith("cuda"):
        cfg.extra["device_name"] = torch.cuda.get_device_name()
    out = Path(cfg.out)
    marks: dict[int, float] = {}

    def on_log(rec: dict) -> None:
        step, now = rec["step"], time.time()
        if step in PROBE:
            marks[step] = now
        if step == PROBE[1]:
            rate = (PROBE[1] - PROBE[0]) / (marks[PROBE[1]] - marks[PROBE[0]])
            cfg.steps = pair_plan(name, PAIRS[name], rate, out.parent, a.deadline, done=PROBE[1], least=PROBE[1] + 10,
                                  fill=a.fill)
            cfg.extra["planned"] = json.loads(plan_file(out.parent, name, PAIRS[name]).read_text())
            (out / "train_config.json").write_text(json.dumps(asdict(cfg), indent=2))
            print(f"{name}: {cfg.extra['planned']} -> {cfg.steps} steps", flush=True)
        elif step > PROBE[1] and now > a.deadline and cfg.steps > step + 1:
            cfg.steps = step + 1  # late: stop at the next step (it evaluates and checkpoints)
            print(f"{name}: deadline passed, stopping at step {cfg.steps}", flush=True)
        if step % 250 == 0 or "valid_bpb" in rec:
            extra = f" valid {rec['valid_bpb']:.4f}" if "valid_bpb" in rec else ""
            print(f"{name} {step}/{cfg.steps} loss {rec['loss']:.3f} {rec['tokens_per_s']:.0f} tok/s{extra}",
                  flush=True)

    t0 = time.time()
    path = train(cfg, _tokenizer(), on_log)
    print(f"{name}: exported {path} after {time.time() - t0:.0f} s", flush=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("role", nargs="?", default="driver")
    p.add_argument("--models", default="gpt-wide,lstm-wide,gpt-large,lstm-large")
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=1.5e-3)
    p.add_argument("--budget", type=float, default=480, help="seconds from start to the end of training")
    p.add_argument("--deadline", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--fill", type=float, default=0.97, help="fraction of the measured time to plan for")
    p.add_argument("--out", default="runs/gpu")
    a = p.parse_args()
    if a.role != "driver":
        worker(a.role, a)
        return 0
    from lmzip.models.data import list_files, tokenize_files

    t0 = time.time()
    Path(a.out).mkdir(parents=True, exist_ok=True)
    for f in [*Path(a.out).glob("rate-*.json"), *Path(a.out).glob("plan-*.json")]:
        f.unlink()
    tok = _tokenizer()
    for files in (TRAIN, VALID):  # once here, so the workers find the cache instead of racing to write it
        print(f"{len(tokenize_files(list_files(files), tok, Path(a.out) / '.tokens')):,} tokens "
              f"({time.time() - t0:.0f} s)", flush=True)
    deadline = t0 + a.budget
    procs = {}
    for name in a.models.split(","):
        args = [sys.executable, __file__, name, "--deadline", str(deadline)] + [
            f"--{k}={getattr(a, k)}" for k in ("device", "batch", "lr", "fill", "out")]
        log = open(Path(a.out) / f"{name}.log", "w")
        procs[name] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    for pr in procs.values():  # a failed model does not stop the others
        pr.wait()
    failed = [n for n, pr in procs.items() if pr.returncode != 0]
    for name in procs:
        print((Path(a.out) / f"{name}.log").read_text()[-(3000 if name in failed else 1500):])
    print(f"done in {time.time() - t0:.0f} s; failed: {', '.join(failed) or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
