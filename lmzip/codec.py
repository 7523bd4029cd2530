"""bytes <-> tokens <-> predictions <-> range coder <-> container.

THE DETERMINISM RULE (everything else in lmzip relies on it, and only this module applies it):
the decoder must compute bit-identical probabilities to the encoder, because constriction's
quantization turns one ulp of difference into a broken stream. So the encoder never takes a
shortcut: both sides run `_lockstep`, the same batched step-by-step path (never a full-sequence
forward pass in place of steps), with the same batch shape (finished segments keep being fed a
padding token), the same positions and window re-priming, the same compute dtype (float32, or
bf16 matrix products via `Predictor.for_compute`), device class and intra-op thread count
(recorded in the header and re-applied by the decoder), no torch.compile, and the one
quantization function `quantize`. A different CPU family or torch build can still change the
bits; the header records what we know and the CRC32 of the original catches the rest.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from . import mix, mix_v6, parallel, transform
from .adapt import AdaptConfig, Adapter
from .checkpoint import LoadedModel
from .coder import Decoder, Encoder, ideal_bits
from .errors import FormatError, IntegrityError
from .format import Header, crc32, join_streams, split_streams, verify

Progress = Callable[[int, int], None]  # called with (tokens coded so far, tokens in all)
# Measured on alice29.txt (benchmarks/README.md): segments of 256 instead of 1024 tokens cost 0.2%
# (Transformer) and 0.04% (LSTM) in size and code 2x faster, since wider batches use the CPU better.
MIN_SEGMENT = 256  # tokens; shorter segments lose context at their cold start
MAX_BATCH = 256  # segments side by side
PARALLEL_FROM = 20_000  # tokens (~60 KB of text): below this, one group in this process


@dataclass
class Settings:
    """The computation settings a file records so its decoder can repeat them exactly."""

    device: str = "cpu"
    threads: int = 1
    dtype: str = "float32"
    mix: bool = False  # mix in the online match model (lmzip.mix)
    mix_v6: bool = False  # decoding a file of format 4-6: their match model (lmzip.mix_v6)
    adapt: AdaptConfig | None = None  # learn while coding (lmzip.adapt)


def default_dtype(device: str, adapt: bool) -> str:
    """bf16 matrix products where the CPU has native bf16 (same bits per byte, faster); else float32.

    Adaptation always codes in float32: it trains the weights it predicts with."""
    native = device == "cpu" and torch.cpu._is_avx512_bf16_supported()
    return "bfloat16" if native and not adapt else "float32"


def cpu_isa() -> str:
    """The CPU kernel family torch dispatches to here (part of what decides the bits)."""
    cap = str(torch.backends.cpu.get_cpu_capability()).lower()
    return "avx512" if "avx512" in cap else "avx2" if "avx2" in cap else "default"


@contextlib.contextmanager
def computation(settings: Settings) -> Iterator[None]:
    """Apply the recorded thread count for the duration of a coding run, then restore it."""
    before = torch.get_num_threads()
    torch.set_num_threads(settings.threads)
    try:
        with torch.inference_mode():
            yield
    finally:
        torch.set_num_threads(before)


def quantize(logits: torch.Tensor) -> np.ndarray:
    """The single logits -> coder-probabilities function both sides call: float32 softmax rows."""
    return torch.softmax(logits.float(), dim=-1).cpu().numpy()


def segment_length(n_tokens: int, min_segment: int = MIN_SEGMENT, max_batch: int = MAX_BATCH) -> int:
    """Choose how long each side-by-side segment is: long enough for context, few enough rows."""
    return max(1, min(max(n_tokens, 1), max(min_segment, math.ceil(n_tokens / max_batch))))


def _lockstep(model: LoadedModel, lengths: np.ndarray, settings: Settings, code, progress: Progress | None):
    """Step all segments together; ``code(t, active_rows, probs)`` returns those rows' tokens."""
    adapter = Adapter(model.predictor, settings.adapt) if settings.adapt else None
    pred = adapter.pred if adapter else model.predictor_for(settings.dtype)  # adapting trains a private copy
    B, L = len(lengths), int(lengths.max())
    toks = np.zeros((B, L), dtype=np.int64)
    state = pred.start(B)
    mixer = (mix_v6 if settings.mix_v6 else mix).MatchMixer(toks, lengths) if settings.mix else None
    inp = torch.full((B,), pred.bos, dtype=torch.long, device=settings.device)
    done = 0
    for t in range(L):
        logits, state = pred.step(inp, state)
        probs = quantize(logits)
        active = np.flatnonzero(lengths > t)
        rows = probs if len(active) == B else probs[active]
        if mixer is not None:
            rows = mixer.mix(t, active, rows)
        toks[active, t] = code(t, active, rows)
        if mixer is not None:
            mixer.update(t, active)
        if adapter is not None and adapter.due(t):
            adapter.learn(toks, lengths, t)
        inp = torch.from_numpy(toks[:, t].copy()).to(settings.device)
        done += len(active)
        if progress:
            progress(done, int(lengths.sum()))
    return toks


def _layout(n_tokens: int, seg: int) -> np.ndarray:
    """Lengths of the segments: all ``seg`` long but the last."""
    B = -(-n_tokens // seg)
    lengths = np.full(B, seg, dtype=np.int64)
    lengths[-1] = n_tokens - seg * (B - 1)
    return lengths


def _segments(tokens: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    seg = int(lengths[0])
    out = np.zeros((len(lengths), seg), dtype=np.int64)
    out.flat[: len(tokens)] = tokens
    return out


def group_bounds(n_segments: int, groups: int) -> list[tuple[int, int]]:
    """Split the segments into ``groups`` contiguous runs of nearly equal size."""
    cuts = [round(i * n_segments / groups) for i in range(groups + 1)]
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def auto_groups(n_tokens: int, n_segments: int) -> int:
    """Groups to code in parallel: one for small inputs (a worker costs ~1.3 s to start), else one per core."""
    return 1 if n_tokens < PARALLEL_FROM else max(1, min(parallel.default_workers(), n_segments, 16))


def _encode_group(model: LoadedModel, segs: np.ndarray, lengths: np.ndarray, settings: Settings,
                  progress: Progress | None = None) -> tuple[bytes, float]:
    """Code one group of segments: its range-coder words and the ideal bits."""
    enc, bits = Encoder(), [0.0]

    def code(t: int, rows: np.ndarray, probs: np.ndarray) -> np.ndarray:
        sym = segs[rows, t]
        bits[0] += float(ideal_bits(sym, probs).sum())
        return enc.code(sym, probs)

    with computation(settings):
        _lockstep(model, lengths, settings, code, progress)
    return enc.finish(), bits[0]


def _decode_group(model: LoadedModel, payload: bytes, lengths: np.ndarray, settings: Settings,
                  progress: Progress | None = None) -> np.ndarray:
    """The mirror image of _encode_group: the group's tokens, segment after segment."""
    dec = Decoder(payload)

    def code(t: int, rows: np.ndarray, probs: np.ndarray) -> np.ndarray:
        return dec.code(None, probs)

    with computation(settings):
        toks = _lockstep(model, lengths, settings, code, progress)
    return np.concatenate([toks[i, : lengths[i]] for i in range(len(lengths))])


def encode(data: bytes, model: LoadedModel, settings: Settings, progress: Progress | None = None,
           segment: int | None = None, groups: int | None = None,
           rows: int | None = None) -> tuple[bytes, Header, float]:
    """Code ``data``; returns the whole .lmz file, its header and the model's ideal bits (Σ -log2 p).

    ``segment`` fixes the segment length; ``rows`` instead caps the segments side by side (fewer,
    longer segments: more sequential steps, which learning from scratch needs)."""
    if settings.adapt and settings.dtype != "float32":
        raise ValueError("adaptive coding runs in float32")
    text, crlf = transform.prepare(data)
    tokens = model.tokenizer.encode(text)
    if model.tokenizer.decode(tokens) != text:  # cannot happen with our tokenizers; never trust it
        raise IntegrityError("the tokenizer does not round-trip this input")
    head = Header(len(data), crc32(data), model_id=model.model_id, model_name=model.name,
                  n_tokens=len(tokens), device=settings.device.split(":")[0], dtype=settings.dtype,
                  threads=settings.threads, isa=cpu_isa() if settings.device == "cpu" else "none",
                  mix=settings.mix, seed=model.seed)
    if settings.adapt:
        head.adapt_optimizer, head.adapt_block = settings.adapt.optimizer, settings.adapt.block
        head.adapt_lr = float(np.float32(settings.adapt.lr))
    if len(tokens) == 0:
        return _stored(data, head), head, 0.0
    head.crlf = crlf
    head.segment_length = segment or (segment_length(len(tokens), 1, rows) if rows else segment_length(len(tokens)))
    lengths = _layout(len(tokens), head.segment_length)
    segs = _segments(tokens, lengths)
    head.groups = min(len(lengths), groups or auto_groups(len(tokens), len(lengths)))
    bounds = group_bounds(len(lengths), head.groups)
    if head.groups == 1:
        results = [_encode_group(model, segs, lengths, settings, progress)]
    else:
        tasks = [(segs[a:b], lengths[a:b], settings) for a, b in bounds]
        results = parallel.map_groups(_encode_group, model, tasks, head.groups, _group_done(progress, lengths, bounds))
    payload = join_streams([r[0] for r in results])
    bits = sum(r[1] for r in results)
    if len(payload) >= len(data):  # coding would not shrink it: store the input as it is
        return _stored(data, head), head, bits
    head.payload_length = len(payload)
    return head.pack() + payload, head, bits


def _group_done(progress: Progress | None, lengths: np.ndarray, bounds: list[tuple[int, int]]):
    """Progress for parallel groups: advanced as each whole group completes."""
    if progress is None:
        return None
    total = int(lengths.sum())

    def done(i: int) -> None:
        progress(int(sum(lengths[a:b].sum() for a, b in bounds[: i + 1])), total)

    return done


def _stored(data: bytes, head: Header) -> bytes:
    head.stored, head.crlf, head.mix, head.model_id, head.model_name = True, False, False, bytes(16), ""
    head.seed = None
    head.adapt_optimizer, head.adapt_lr, head.adapt_block = "", 0.0, 0
    head.n_tokens = head.segment_length = 0
    head.groups, head.payload_length = 1, len(data)
    return head.pack() + data


def decode(head: Header, payload: bytes, model: LoadedModel | None, progress: Progress | None = None,
           workers: int | None = None) -> bytes:
    """The mirror image of ``encode``: rebuild every group's tokens step by step, then check the CRC32."""
    if head.stored:
        return verify(head, payload)
    assert model is not None, "a coded file needs its model"
    adapt = AdaptConfig(head.adapt_lr, head.adapt_block, head.adapt_optimizer) if head.adapt else None
    settings = Settings(device=head.device, threads=head.threads, dtype=head.dtype, mix=head.mix,
                        mix_v6=head.mix and head.version < 7, adapt=adapt)
    lengths = _layout(head.n_tokens, head.segment_length)
    bounds = group_bounds(len(lengths), head.groups)
    streams = split_streams(payload, head.groups)
    if any(len(s) % 4 for s in streams):
        raise FormatError("corrupt data (a stream is not a whole number of 32-bit words)")
    try:
        if head.groups == 1:
            parts = [_decode_group(model, streams[0], lengths, settings, progress)]
        else:
            tasks = [(st, lengths[a:b], settings) for st, (a, b) in zip(streams, bounds, strict=True)]
            parts = parallel.map_groups(_decode_group, model, tasks, workers or parallel.default_workers(),
                                        _group_done(progress, lengths, bounds))
    except (ValueError, KeyError, RuntimeError) as e:
        raise IntegrityError(f"corrupt data (the range decoder failed: {e})") from e
    data = transform.restore(model.tokenizer.decode(np.concatenate(parts)), head.crlf)
    isa = "" if head.isa in ("none", cpu_isa()) else f" (written on a {head.isa} CPU, decoded on {cpu_isa()})"
    return verify(head, data, isa)
