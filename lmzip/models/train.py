"""The training loop: AdamW, warm-up + cosine decay, clipping, validation in bits per byte,
resumable safetensors checkpoints, a JSONL log and a loss-curve PNG. Seeded and reproducible."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

from lmzip.errors import LmzipError
from lmzip.models import datamix, distributed
from lmzip.models.checkpoint import save_model
from lmzip.models.data import chunk_doc, list_files, read_bytes, sha256_files, tokenize_files
from lmzip.models.model import LSTMModel, ModelConfig, Predictor, build_model, config_from_dict, config_to_dict
from lmzip.models.plots import plot_history
from lmzip.models.tokenizer import SPLIT, SPLIT_UTF8, ByteTokenizer, Tokenizer, tokenizer_from_json, train_bpe


@dataclass
class TrainConfig:
    """Everything that decides a training run (stored in the run folder and the model's config)."""

    model: dict[str, Any]  # a ModelConfig as a dict
    train: list[str]
    valid: list[str]
    out: str  # run folder: checkpoints, log, plot; the model is exported to out/model
    name: str = "model"
    steps: int = 1000
    batch: int = 32
    lr: float = 1.5e-3
    min_lr_frac: float = 0.1
    warmup: int = 200
    weight_decay: float = 0.1
    clip: float = 1.0
    seed: int = 0
    eval_every: int = 250
    eval_tokens: int = 65536
    ckpt_every: int = 250
    device: str = "cpu"
    threads: int = 1
    bf16: bool = True  # autocast for the forward/backward (weights stay fp32)
    mixture: dict[str, Any] | None = None  # a datamix.Mixture as a dict: sources drawn by weight, validated per kind
    extra: dict[str, Any] = field(default_factory=dict)


def _mixture_of(saved: dict[str, Any]) -> dict[str, Any] | None:
    """A saved run config's training mixture (runs before lmzip 0.8 saved it as "mix")."""
    return saved.get("mixture", saved.get("mix"))


def _config(text: str) -> TrainConfig:
    """A run's saved TrainConfig (its JSON), older runs' field names read too."""
    saved = json.loads(text)
    saved["mixture"] = _mixture_of(saved)
    saved.pop("mix", None)
    return TrainConfig(**saved)


def prepare_tokenizer(spec: str, files: list[Path], sample_bytes: int = 24 << 20,
                      mixture: datamix.Mixture | None = None) -> Tokenizer:
    """``bytes``, ``bpe<N>`` or ``ubpe<N>`` (pieces along UTF-8 characters), learned on an even sample
    of the files (of a mixture's sources, by weight), or a tokenizer JSON path."""
    if spec == "bytes":
        return ByteTokenizer()
    kind, _, n = spec.partition("bpe")
    if kind in ("", "u") and n.isdigit():
        if mixture is not None:
            return train_bpe(datamix.sample_docs(mixture, sample_bytes), int(n), SPLIT_UTF8 if kind else SPLIT)
        per_file = max(1, sample_bytes // max(1, len(files)))
        docs: list[bytes] = []
        for f in files:
            pieces = chunk_doc(read_bytes(f), 1 << 16)
            docs += pieces[:: max(1, len(pieces) * (1 << 16) // per_file)]
        return train_bpe(iter(docs), int(n), SPLIT_UTF8 if kind else SPLIT)
    try:
        return tokenizer_from_json(Path(spec).read_text())
    except (OSError, ValueError) as e:
        raise LmzipError(f"{spec}: not a tokenizer (bytes, bpe<N> or a tokenizer.json): {e}") from e


def _bf16_here(dev_type: str, is_lstm: bool) -> bool:
    """bf16 autocast where the device runs it: oneDNN has no bf16 LSTM on CPUs without avx512_bf16
    (it fails to create the primitive), so such CPUs train the LSTM in float32."""
    return dev_type == "cuda" or not is_lstm or torch.cpu._is_avx512_bf16_supported()


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up, then cosine decay to min_lr_frac * lr at the last step."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    t = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * (cfg.min_lr_frac + (1 - cfg.min_lr_frac) * 0.5 * (1 + math.cos(math.pi * min(1.0, t))))


class Batches:
    """Deterministic batches: random crops (Transformer) or carried contiguous streams (LSTM)."""

    def __init__(self, tokens: np.ndarray, cfg: TrainConfig, bos: int, streams: bool):
        self.tokens, self.cfg, self.bos, self.streams = tokens, cfg, bos, streams
        self.T = config_from_dict(cfg.model).context
        self.pos = np.zeros(cfg.batch, dtype=np.int64)  # stream positions (LSTM)
        self.fresh = np.ones(cfg.batch, dtype=bool)

    def get(self, step: int) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
        """(x, y, reset) for a step; x starts with BOS wherever a crop or a stream starts."""
        rng = np.random.default_rng([self.cfg.seed, step])
        n, T, B = len(self.tokens), self.T, self.cfg.batch
        if not self.streams:
            starts = rng.integers(0, n - T, size=B)
            reset = np.ones(B, dtype=bool)
        else:  # a stream restarts at a random place when it runs out, or now and then
            restart = self.fresh | (self.pos + T >= n) | (rng.random(B) < 1 / 16)
            self.pos[restart] = rng.integers(1, n - T - 1, size=int(restart.sum()))
            starts, reset = self.pos.copy(), restart
            self.pos += T
            self.fresh[:] = False
        idx = starts[:, None] + np.arange(T)[None, :]
        y = self.tokens[idx].astype(np.int64)
        x = np.empty_like(y)
        x[:, 1:] = y[:, :-1]
        x[:, 0] = np.where(reset, self.bos, self.tokens[np.maximum(starts - 1, 0)])
        return torch.from_numpy(x), torch.from_numpy(y), reset

    def state_dict(self) -> dict[str, Any]:
        return {"pos": self.pos.tolist(), "fresh": self.fresh.tolist()}

    def load_state_dict(self, d: dict[str, Any]) -> None:
        if len(d["pos"]) != len(self.pos):
            raise LmzipError("the checkpoint was written for another batch size: resume with the same one")
        self.pos[:] = d["pos"]
        self.fresh[:] = d["fresh"]


@torch.no_grad()
def evaluate(model: Predictor, tokens: np.ndarray, tok: Tokenizer, cfg: TrainConfig) -> float:
    """Bits per byte on the first ``eval_tokens`` validation tokens (windows starting with BOS)."""
    model.eval()
    T = model.config.context
    n = min(len(tokens), cfg.eval_tokens) // T * T
    ys = torch.from_numpy(tokens[:n].astype(np.int64)).view(-1, T)
    xs = torch.cat([torch.full((ys.shape[0], 1), model.bos), ys[:, :-1]], 1)
    nats = 0.0
    for i in range(0, len(ys), 16):
        logits = model(xs[i : i + 16].to(cfg.device)).float()
        nats += F.cross_entropy(logits.flatten(0, 1), ys[i : i + 16].flatten().to(cfg.device), reduction="sum").item()
    nbytes = sum(len(tok.token_bytes(int(t))) for t in tokens[:n])
    model.train()
    return nats / math.log(2) / max(1, nbytes)


def _optimizer(model: Predictor, cfg: TrainConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.ndim >= 2]
    other = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": other, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95))


def _save_ckpt(run: Path, model, opt, batches: Batches, step: int, lstm_state, history) -> None:
    """Checkpoint as safetensors (model + optimizer moments) plus JSON; no pickle."""
    tensors = {f"model.{k}": v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    names = {id(p): n for n, p in model.named_parameters()}
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p, {})
            for key in ("exp_avg", "exp_avg_sq"):
                if key in st:
                    tensors[f"opt.{key}.{names[id(p)]}"] = st[key].cpu().contiguous()
    if lstm_state is not None:
        tensors["lstm.h"], tensors["lstm.c"] = (s.detach().cpu().contiguous() for s in lstm_state)
    save_file(tensors, str(run / "ckpt.safetensors.tmp"))
    meta = {"step": step, "batches": batches.state_dict(), "history": history}
    (run / "ckpt.json.tmp").write_text(json.dumps(meta))
    (run / "ckpt.safetensors.tmp").replace(run / "ckpt.safetensors")
    (run / "ckpt.json.tmp").replace(run / "ckpt.json")


def _load_ckpt(run: Path, model, opt, batches: Batches):
    tensors = load_file(str(run / "ckpt.safetensors"))
    meta = json.loads((run / "ckpt.json").read_text())
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    params = dict(model.named_parameters())
    step = meta["step"]
    for k, v in tensors.items():
        if k.startswith("opt."):
            _, key, name = k.split(".", 2)
            st = opt.state[params[name]]
            st[key] = v.clone()
            st["step"] = torch.tensor(float(step))
    batches.load_state_dict(meta["batches"])
    lstm_state = (tensors["lstm.h"], tensors["lstm.c"]) if "lstm.h" in tensors else None
    return step, lstm_state, meta["history"]


def train(cfg: TrainConfig, tok: Tokenizer, on_log: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """Train (resuming from ``cfg.out`` if a checkpoint is there) and export the model folder.
    Under torchrun, data-parallel over the ranks (lmzip.models.distributed); rank 0 writes every file."""
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(cfg.seed)
    ranks = distributed.setup(cfg.device, cfg.batch)
    ranks.same("tokenizer", tok.to_json())
    run = Path(cfg.out)
    run.mkdir(parents=True, exist_ok=True)
    if ranks.main:
        before = run / "train_config.json"
    if (run / "ckpt.json").exists() and before.exists() and _mixture_of(json.loads(before.read_text())) != cfg.mixture:
        raise LmzipError(f"{run}: the run was started with another training mixture; resume it with the same one")
    (run / "train_config.json").write_text(json.dumps(asdict(cfg), indent=2))
    dev = ranks.device  # cfg.device, or this rank's GPU
    mcfg: ModelConfig = config_from_dict(cfg.model)
    train_files, valid_files = list_files(cfg.train), list_files(cfg.valid) if cfg.valid else []
    cache = run.parent / ".tokens"
    model = build_model(mcfg).to(dev)
    model.train()
    opt = _optimizer(model, cfg)
    is_lstm = isinstance(model, LSTMModel)
    with ranks.first():  # rank 0 fills the token cache, the others read it
        mixed = datamix.load_tokens(datamix.Mixture.from_dict(cfg.mixture), tok, cache) if cfg.mixture else None
        if mixed is None:
            tokens = tokenize_files(train_files, tok, cache)
            vtokens = tokenize_files(valid_files, tok, cache) if valid_files else None
    if mixed is not None:
        tokens = mixed.tokens
        batches: Batches | datamix.MixtureBatches = datamix.MixtureBatches(mixed, cfg.batch, mcfg.context, cfg.seed,
                                                                    model.bos, is_lstm)
    else:
        if vtokens is None:  # no validation files: hold out the last 2% of the training tokens
            cut = len(tokens) - max(len(tokens) // 50, 1)
            tokens, vtokens = tokens[:cut], tokens[cut:]
        batches = Batches(tokens, cfg, model.bos, streams=is_lstm)
    step, lstm_state, history = 0, None, []
    if (run / "ckpt.json").exists():
        step, lstm_state, history = _load_ckpt(run, model, opt, batches)
        lstm_state = ranks.local_rows(lstm_state, cfg.batch)  # the checkpoint holds every row's
    forward = distributed.wrap(model, is_lstm, ranks)
    t0, tok_count = time.time(), 0
    while step < cfg.steps:
        x, y, reset = ranks.shard(*batches.get(step))  # the global batch's rows of this rank
        x, y = x.to(dev), y.to(dev)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, cfg)
        dev_type = "cuda" if cfg.device.startswith("cuda") else "cpu"
        with torch.autocast(dev_type, dtype=torch.bfloat16, enabled=cfg.bf16 and _bf16_here(dev_type, is_lstm)):
            if is_lstm and lstm_state is not None:
                keep = torch.from_numpy(~reset).to(dev)[None, :, None].float()
                lstm_state = tuple((s.to(dev) * keep).detach() for s in lstm_state)
            logits, new_state = forward(x, lstm_state)
            if is_lstm:
                lstm_state = tuple(s.detach().float() for s in new_state)
            # this rank's part of the global batch's mean loss: the ranks' parts add up to it
            loss = F.cross_entropy(logits.float().flatten(0, 1), y.flatten()) * (len(x) / cfg.batch)
        opt.zero_grad(set_to_none=True)
        (loss * ranks.world).backward()  # DDP averages the gradients over the ranks
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        opt.step()
        step += 1
        tok_count += cfg.batch * x.shape[1]
        rec: dict[str, Any] = {"step": step, "loss": ranks.mean(loss), "lr": lr_at(step - 1, cfg),
                               "tokens_per_s": tok_count / max(1e-9, time.time() - t0)}
        # rank 0 validates, logs and saves; the others wait for it in the next step's all-reduce
        if (step % cfg.eval_every == 0 or step == cfg.steps) and mixed is not None and ranks.main:
            rec["valid_bpb"], rec["valid_kinds"] = datamix.evaluate_kinds(
                mixed, lambda v: evaluate(model, v, tok, cfg))
        elif (step % cfg.eval_every == 0 or step == cfg.steps) and ranks.main:
            rec["valid_bpb"] = evaluate(model, vtokens, tok, cfg)
        if step % 10 == 0 or "valid_bpb" in rec:
            history.append(rec)
        if on_log and ranks.main:
            on_log(rec)
        if step % cfg.ckpt_every == 0 or step == cfg.steps:
            every_row = ranks.gather_rows(lstm_state)  # all ranks take part
            if ranks.main:
                _save_ckpt(run, model, opt, batches, step, every_row, history)
    path = export(run, model, tok, cfg, history, train_files, tokens) if ranks.main else run / "model"
    ranks.finish()
    return path


def export_checkpoint(run: Path, tok: Tokenizer) -> Path:
    """Export the latest checkpoint of a run as a model folder (to stop a long run early)."""
    run = Path(run)
    if not (run / "ckpt.json").exists():
        raise LmzipError(f"{run}: no checkpoint to export")
    cfg = _config((run / "train_config.json").read_text())
    model = build_model(config_from_dict(cfg.model))
    step, _, history = _load_ckpt(run, model, _optimizer(model, cfg), Batches(np.zeros(1 << 12, np.uint16), cfg,
                                                                                model.bos, False))
    files = list_files(cfg.train)
    sample = tokenize_files(files[:1], tok, run.parent / ".tokens") if files else np.zeros(0, np.uint16)
    return export(run, model, tok, cfg, history, files, sample)


def export(run: Path, model, tok, cfg: TrainConfig, history, train_files, tokens) -> Path:
    """Write the model folder (bf16 matrices) with its training record, and the loss-curve PNG."""
    vals = [h for h in history if "valid_bpb" in h]
    bytes_per_token = None
    if len(tokens):
        sample = tokens[: 1 << 16]
        bytes_per_token = sum(len(tok.token_bytes(int(t))) for t in sample) / len(sample)
    meta = {
        "name": cfg.name,
        "training": {
            "data": [str(f) for f in train_files],
            "data_sha256": sha256_files(train_files),
            "valid": cfg.valid,
            "steps": vals[-1]["step"] if vals else None,
            "tokens_seen": (vals[-1]["step"] if vals else 0) * cfg.batch * config_to_dict(model.config)["context"],
            "bytes_per_token": bytes_per_token,
            "valid_bpb": vals[-1]["valid_bpb"] if vals else None,
            "valid_kinds": vals[-1].get("valid_kinds") if vals else None,
            "mixture": cfg.mixture,
            "config": {k: v for k, v in asdict(cfg).items() if k not in ("train", "valid", "out", "mixture")},
        },
    }
    out = run / "model"
    save_model(model.cpu(), tok, out, meta)
    plot_history(history, run / "loss.png", cfg.name)
    return out
