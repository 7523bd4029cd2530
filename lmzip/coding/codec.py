"""bytes <-> tokens <-> counts <-> range coder <-> container; encoder and decoder as mirror images.

Both sides run one loop, ``_lockstep``: every segment of a group steps together, each step's
predictor gives integer counts for the next token of every segment (in files of formats 8-10 with
mix, the token match model reshapes them), and the coder codes (or decodes) one token per row.
Where the counts come from is the file's arithmetic (lmzip.coding.settings):
  - exact (3, or 1 in files of lmzip 0.3.0-0.4.0, with finer operands): the model in
    lmzip.arith.exact's integer arithmetic (lmzip.models.qmodel). The exactness rule is written down
    once, in lmzip.arith.exact; under it the counts are the same on every machine, thread count and
    device, so any machine decodes the file, and the same input, model and settings give the same
    file everywhere (the layout depends on the input only).
  - exact with learning (4, or 2): the same, and after every block of steps encoder and decoder take
    the same learning step (lmzip.coding.learn, in lmzip.arith.detfloat's deterministic float64) and rebuild
    the exact predictor from the new weights.
With mix (format 11) the coder is lmzip.coding.mix's: each token coded bit by bit, the counts
mixed with the counting models of lmzip.cm; without it, constriction's range coder codes the counts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np
import torch

from lmzip.coding import counting, mix, parallel, transform
from lmzip.coding.coder import Decoder, Encoder, coded_bits
from lmzip.coding.format import join_streams, split_streams, stored_frame, verify
from lmzip.coding.header import Header, crc32, decode_memory
from lmzip.coding.learn import Learner
from lmzip.coding.legacy import match
from lmzip.coding.settings import LEARNING, MIX_LEVEL, MIX_VERSION, AdaptConfig, Settings
from lmzip.errors import FormatError, IntegrityError, LmzipError
from lmzip.models.checkpoint import LoadedModel

Progress = Callable[[int, int], None]  # called with (tokens coded so far, tokens in all)
Visit = Callable[[int, np.ndarray, np.ndarray, np.ndarray], None]  # (step, rows, counts, tokens)


def with_threads(settings: Settings, processes: int) -> Settings:
    """``settings`` with its thread count decided: as given, or the cores this process may use shared
    among the ``processes`` coding at once (the bits never depend on it, only the speed)."""
    if settings.threads is not None:
        return settings
    return replace(settings, threads=max(1, min(64, parallel.default_workers() // max(1, processes))))


@contextlib.contextmanager
def computation(settings: Settings) -> Iterator[None]:
    """Apply the thread count for the duration of a coding run, then restore it."""
    before = torch.get_num_threads()
    torch.set_num_threads(with_threads(settings, 1).threads)
    try:
        with torch.inference_mode():
            yield
    finally:
        torch.set_num_threads(before)


@dataclass
class Layout:
    """How the tokens are cut: segments side by side, in contiguous groups."""

    lengths: np.ndarray  # tokens per segment: all ``lengths[0]`` but the last
    groups: int

    @classmethod
    def of(cls, n_tokens: int, segment_length: int, groups: int) -> Layout:
        B = -(-n_tokens // segment_length)
        lengths = np.full(B, segment_length, dtype=np.int64)
        lengths[-1] = n_tokens - segment_length * (B - 1)
        return cls(lengths, groups)

    def bounds(self) -> list[tuple[int, int]]:
        """Each group's segments: contiguous runs of nearly equal size."""
        n, g = len(self.lengths), self.groups
        cuts = [round(i * n / g) for i in range(g + 1)]
        return list(zip(cuts[:-1], cuts[1:], strict=True))

    def segments(self, tokens: np.ndarray) -> np.ndarray:
        """The tokens as a [segments, segment length] array (the last row padded with zeros)."""
        out = np.zeros((len(self.lengths), int(self.lengths[0])), dtype=np.int64)
        out.flat[: len(tokens)] = tokens
        return out


AHEAD = 4  # the encoder's passes: positions at once where the predictor can (measured: 4 beats 16 and 1)


def _lockstep(model: LoadedModel, lengths: np.ndarray, settings: Settings, code, progress: Progress | None,
              known: np.ndarray | None = None):
    """Step all segments of a group together; ``code(t, active_rows, counts)`` returns those rows' tokens.

    ``known`` (the encoder's segments) lets a predictor with ``steps`` compute AHEAD steps' counts in
    one pass: the same integers, since the arithmetic is exact."""
    if settings.adapt:
        learner = Learner(model.predictor, settings.adapt, settings.device, settings.counts_arith)
    else:
        learner = None
    pred = learner.pred if learner else model.exact_for(settings.device, settings.counts_arith)
    B, L = len(lengths), int(lengths.max())
    toks = np.zeros((B, L), dtype=np.int64)
    state = pred.start(B)
    mixer = match.MatchMixer(toks, lengths) if settings.match else None  # formats 8-10 (lmzip.coding.legacy)
    inp = torch.full((B,), pred.bos, dtype=torch.long, device=settings.device)
    done, total = 0, int(lengths.sum())
    # a pass must not span a learning step: blocks that are whole numbers of passes, or single steps
    ahead = known is not None and hasattr(pred, "steps") and (learner is None or learner.cfg.steps % AHEAD == 0)
    if ahead:  # what step t is fed: BOS, then the previous token (0 past a segment's end, as below)
        feed = np.concatenate([np.full((B, 1), pred.bos, dtype=np.int64), known[:, : L - 1]], axis=1)
    for t in range(L):
        if ahead:
            if t % AHEAD == 0:
                block, state = pred.steps(torch.from_numpy(feed[:, t : t + AHEAD]).to(settings.device), state)
                block = block.float().cpu().numpy()
            counts = block[:, t % AHEAD]
        else:
            counts, state = pred.step(inp, state)
            counts = counts.float().cpu().numpy()  # integers below 2^24: exact in float32
        active = np.flatnonzero(lengths > t)
        rows = counts if len(active) == B else counts[active]
        if mixer is not None:
            rows = mixer.mix(t, active, rows)
        toks[active, t] = code(t, active, rows)
        if mixer is not None:
            mixer.update(t, active)
        if learner is not None and learner.due(t):
            learner.learn(toks, lengths, t)
            pred = learner.pred
        inp = torch.from_numpy(toks[:, t].copy()).to(settings.device)
        done += len(active)
        if progress:
            progress(done, total)
    return toks


def trace(data: bytes, model: LoadedModel, settings: Settings, visit: Visit,
          progress: Progress | None = None) -> tuple[list[int], bool, Layout]:
    """Run the coder's own computation over ``data`` without coding: ``visit(t, rows, counts, tokens)``
    sees each step's rows (what explain shows). Returns the tokens, the CRLF flag and the layout."""
    text, crlf = transform.prepare(data)
    tokens = list(model.tokenizer.encode(text))
    if not tokens:
        return tokens, crlf, Layout(np.zeros(0, dtype=np.int64), 1)
    seg, _ = settings.layout(len(tokens))
    layout = Layout.of(len(tokens), seg, 1)
    segs = layout.segments(np.asarray(tokens))

    def code(t: int, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
        visit(t, rows, counts, segs[rows, t])
        return segs[rows, t]

    with computation(settings):
        _lockstep(model, layout.lengths, settings, code, progress)
    return tokens, crlf, layout


def _encode_group(model: LoadedModel, segs: np.ndarray, lengths: np.ndarray, settings: Settings, original: int,
                  race: tuple[mix.Race, int] | None = None,
                  progress: Progress | None = None) -> tuple[bytes, float]:
    """Code one group of segments: its range-coder words (or with mix, its counting-mixed coder's
    bytes) and the bits the coder paid (``original``: the block's length, which bounds a segment's;
    ``race``: with mix, the block's groups racing counting, and this group's number: mix.OverBudget)."""
    if settings.mix:
        try:
            mixed = mix.GroupCoder(model, lengths, settings.mix_level, original, known=segs, race=race,
                                   version=settings.mix_version)
            with computation(settings):
                _lockstep(model, lengths, settings, mixed.code, progress, known=segs)
        finally:
            if race is not None:
                race[0].leave(race[1])
        payload = mixed.finish()
        return payload, 8.0 * len(payload)
    enc, bits = Encoder(), [0.0]

    def code(t: int, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
        sym = segs[rows, t]
        bits[0] += float(coded_bits(sym, counts).sum())
        return enc.code(sym, counts)

    with computation(settings):
        _lockstep(model, lengths, settings, code, progress, known=segs)
    return enc.finish(), bits[0]


def _decode_group(model: LoadedModel, payload: bytes, lengths: np.ndarray, settings: Settings, original: int,
                  progress: Progress | None = None) -> np.ndarray:
    """The mirror image of _encode_group: the group's tokens, segment after segment."""
    if settings.mix:
        code = mix.GroupCoder(model, lengths, settings.mix_level, original, payload=payload,
                              version=settings.mix_version).code
    else:
        dec = Decoder(payload)

        def code(t: int, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
            return dec.code(None, counts)

    with computation(settings):
        toks = _lockstep(model, lengths, settings, code, progress)
    return np.concatenate([toks[i, : lengths[i]] for i in range(len(lengths))])


def header(data: bytes, model: LoadedModel, settings: Settings, **where) -> Header:
    """The header every block coded with ``settings`` starts from (layout and payload filled in later)."""
    head = Header(len(data), crc32(data), model_id=model.model_id, model_name=model.name, arith=settings.arith,
                  mix=settings.mix, seed=model.seed, mix_level=settings.mix_level if settings.mix else 0,
                  mix_version=settings.mix_version if settings.mix else 0, **where)
    if settings.adapt:
        head.adapt_optimizer, head.adapt_steps = settings.adapt.optimizer, settings.adapt.steps
        head.adapt_lr = float(np.float32(settings.adapt.lr))
    return head


Tokenized = tuple[str, bool, list[int]]


def tokenize(data: bytes, model: LoadedModel) -> Tokenized:
    """The block as the model reads it: its text (CRLF folded), whether it was folded, its tokens."""
    text, crlf = transform.prepare(data)
    tokens = model.tokenizer.encode(text)
    if model.tokenizer.decode(tokens) != text:  # cannot happen with our tokenizers; never trust it
        raise IntegrityError("the tokenizer does not round-trip this input")
    return text, crlf, tokens


def too_short(tokenized: Tokenized, model: LoadedModel) -> bool:
    """Whether the model would not be tried on this block at all: its tokenizer cut it into tokens shorter than
    mix.SHORT of its training text's (what `encode` asks of a budget's block), so counting alone codes it."""
    text, _, tokens = tokenized
    return 100 * len(text) < mix.token_bytes(model) * len(tokens)


def encode(data: bytes, model: LoadedModel, settings: Settings, progress: Progress | None = None,
           workers: int | None = None, block: int = 0, last: bool = True,
           budget: mix.Budget | None = None, tokenized: Tokenized | None = None) -> tuple[bytes, Header, float] | None:
    """Code ``data``, block number ``block`` of an input (lmzip.coding.stream; at most
    ``settings.block_size`` bytes); returns its frame, the frame's header and the bits the coder paid
    (Σ -log2 p). ``workers`` decides only how many groups run at once, never how the input is cut.
    ``budget`` (with mix): None instead once a group gives up (another frame is or will be smaller);
    ``tokenized``: the block's `tokenize`, where the caller has it already."""
    if len(data) > settings.block_size:
        raise ValueError(f"a block of {len(data)} bytes is longer than the block size {settings.block_size}")
    where = dict(block=block, block_size=settings.block_size, last=last)
    if transform.looks_random(data):  # nothing for a model to find: store it without running one
        return (*stored_frame(data, **where), 0.0)
    if settings.counting:
        return counting.encode(data, settings.counting, progress, **where)
    text, crlf, tokens = tokenized or tokenize(data, model)
    head = header(data, model, settings, **where)
    if len(tokens) == 0:
        return (*stored_frame(data, **where), 0.0)
    if budget is not None and budget.short(len(text), len(tokens)):  # the model would not win it
        return None
    head.crlf, head.n_tokens = crlf, len(tokens)
    head.segment_length, head.groups = settings.layout(len(tokens))
    layout = Layout.of(len(tokens), head.segment_length, head.groups)
    segs, bounds = layout.segments(np.asarray(tokens)), layout.bounds()
    workers = workers or parallel.default_workers()
    settings = with_threads(settings, min(workers, head.groups))
    race = None
    if budget is not None:  # the groups step together, judged as one (CRLF folded: the text's bytes)
        judged = replace(budget, segments=mix.cold_starts(len(layout.lengths), len(text)),
                         text=max(1, len(text)) if crlf else budget.text)
        race = mix.Race(judged, len(bounds), workers)
    tasks = [(segs[a:b], layout.lengths[a:b], settings, len(data), race and (race, i))
             for i, (a, b) in enumerate(bounds)]
    try:
        results = parallel.map_groups(_encode_group, model, tasks, workers, progress, _sizes(layout.lengths, bounds),
                                      together=race is not None)
    except mix.OverBudget:
        return None
    payload = join_streams([r[0] for r in results])
    bits = sum(r[1] for r in results)
    if len(payload) >= len(data):  # coding would not shrink it: store the input as it is
        return (*stored_frame(data, **where), bits)
    head.payload_length = len(payload)
    return head.pack() + payload, head, bits


def _sizes(lengths: np.ndarray, bounds: list[tuple[int, int]]) -> list[int]:
    """Tokens per group: the totals the groups' live progress adds up to."""
    return [int(lengths[a:b].sum()) for a, b in bounds]




def settings_of(head: Header, device: str = "cpu") -> Settings:
    """What a file was coded with, as the decoder must repeat it (``device``: exact files only)."""
    adapt = AdaptConfig(head.adapt_lr, head.adapt_steps, head.adapt_optimizer) if head.adapt else None
    counts = next(a for a, learning in LEARNING.items() if head.arith in (a, learning))
    return Settings(mix=head.mix, adapt=adapt, seed=head.seed, device=device, counts_arith=counts,
                    mix_level=head.mix_level or MIX_LEVEL, match=head.match,
                    mix_version=head.mix_version or MIX_VERSION)


def decode(head: Header, payload: bytes, model: LoadedModel | None, progress: Progress | None = None,
           workers: int | None = None, device: str = "cpu", threads: int | None = None) -> bytes:
    """The mirror image of ``encode``: rebuild every group's tokens step by step, then check the CRC32
    (``threads``: intra-op threads per process, as Settings.threads; never the bits)."""
    if head.stored:
        return verify(head, payload)
    if head.counting:
        return counting.decode(head, payload, progress)
    if model is None:
        raise ValueError("a coded file needs its model")
    workers = workers or parallel.default_workers()
    need, have = decode_memory(head), parallel.available_memory()
    if head.mix:  # each group's counting tables and byte buffer, for the groups that run at once
        need += mix.memory(head, model, workers)
    if have is not None and need > have:
        raise LmzipError(f"needs {need / 2**30:.1f} GiB of memory to decode, {have / 2**30:.1f} GiB available")
    settings = with_threads(replace(settings_of(head, device), threads=threads), min(workers, head.groups))
    layout = Layout.of(head.n_tokens, head.segment_length, head.groups)
    streams = split_streams(payload, head.groups)
    if not head.mix and any(len(s) % 4 for s in streams):
        raise FormatError("corrupt data (a stream is not a whole number of 32-bit words)")
    tasks = [(st, layout.lengths[a:b], settings, head.original_length)
             for st, (a, b) in zip(streams, layout.bounds(), strict=True)]
    try:
        parts = parallel.map_groups(_decode_group, model, tasks, workers, progress,
                                    _sizes(layout.lengths, layout.bounds()))
    except (ValueError, KeyError, RuntimeError) as e:
        raise IntegrityError(f"corrupt data (the range decoder failed: {e})") from e
    data = transform.restore(model.tokenizer.decode(np.concatenate(parts)), head.crlf)
    return verify(head, data)
