"""Every coding option in one object, its defaults applied once (``Settings.make``); the codec
derives the segment layout from it and builds the header from it. Imports no torch."""

from __future__ import annotations

import math
from dataclasses import dataclass

from lmzip.arith import versions
from lmzip.cm import format as cm_format
from lmzip.coding import header

# the arithmetics (lmzip.arith.versions): what new files' counts are computed in, and the same learning while
# coding (lmzip.coding.learn, in lmzip.arith.detfloat's float64); every earlier one still decodes
ARITH_EXACT = versions.COUNTS
LEARNING = versions.LEARNING  # the arithmetic of the counts -> the same with learning while coding
ARITH_LEARN = LEARNING[ARITH_EXACT]

# Measured on alice29.txt (benchmarks/README.md): segments of 256 instead of 1024 tokens cost 0.2%
# (Transformer) and 0.04% (LSTM) in size and code 2x faster, since wider batches use the CPU better.
MIN_SEGMENT = 256  # tokens; shorter segments lose context at their cold start
MAX_BATCH = 256  # segments side by side
PARALLEL_FROM = 20_000  # tokens (~60 KB of text): below this, one group
# above it, a group per 128 segments (so at most MAX_BATCH / 128 = 2 by default), whatever the machine:
# fewer, wider groups code faster per CPU-second (alice29.txt in one process: one group of 183
# segments 10.9 KB/s, two groups of ~92 one after the other 8.8 KB/s)
ROWS_PER_GROUP = 128
MAX_GROUPS = 16
# Inputs are cut into independent blocks of this many bytes (lmzip.coding.stream), so memory does not
# grow with the input: a 4 MiB block holds ~1.2 M tokens, 256 segments of ~4,700 (benchmarks/results/memory.md)
BLOCK_SIZE = header.BLOCK_SIZE
MAX_BLOCK = (1 << 32) - 1
# --mix mixes the counting models of cm version MIX_VERSION in (format 12; format 11 mixed version 1's in at level 5,
# 62 MiB per group) with the tables of this level: version 9's take 148 MiB per group at level 4 (the default then
# peaks at 1,025 MiB compressing a 4 MiB block of English, 899 with format 11's loop: benchmarks/results/memory.md),
# 209 at 5, which wrote 0.16% (alice29.txt) and 0.17% (paper2) less than 4, at ~0.12 GiB more per group at once
MIX_LEVEL = 4
# Mixed in since format 12's first builds' cm version 9, version 11 (counting's newest models; 218 MiB per group
# at level 4) wrote the first 64 KB of the sample's files 0.29% smaller (benchmarks/levels.py sizes: -4 1.8236 ->
# 1.8184; world192 -0.7%, news -0.5%, paper6 -0.5%; bible.txt's mixed frame now wins its race, -10.6%; with the
# counted frames in 11 too, below: 1.8173) at alice29.txt's 20.7 -> 19.8 / 20.6 -> 18.8 KB/s, peak 772 -> 850 MiB
# (one thread; Xeon, AVX-512 VNNI). Version 26 (its 56 hashed models, the misses stage, three more APM stages and the
# calibration; 472 MiB per group at level 4, ~280 MiB of them rows a short input never touches) in both the mixed and
# the counted frames: the sample 659,476 -> 647,660 bytes at -4 (-1.79%; world192 -2.1%, paper1 -1.5%, news -1.4%;
# enwik5's first 64 KB, given up before, -22%: lmzip.coding.mix.COLD), the 42 bench files through the command line
# 3,268,577 -> 3,216,216 bytes (1.3573 -> 1.3356 bits per byte).
MIX_VERSION = 26  # lmzip.cm.mix.CM_VERSION
# --mix also counts each block alone and keeps the smaller frame (lmzip.coding.stream): a block of over
# COUNTED_LARGE bytes at COUNTED_LEVEL in cm version COUNTED_VERSION (below). Those tables live only during
# that pass, freed before the groups make theirs, but the loaded model stays beside them: with cm version 4,
# level 8's 636 MiB held the default at 1,023 MiB on a 4 MiB block (benchmarks/memory.py). Version 5 at level 6
# (272 MiB) writes less than version 4 at 7 (344 MiB), the setting before, over benchmarks/cm_sample.py's
# sample (benchmarks/results/cm-sample/); version 6 at 6 (292 MiB) 0.87% less again, version 7 (328 MiB) 0.28%
# less again, version 8 (332 MiB) 0.28% less again (its 1-bit images), version 9 (four-way lookups, the same
# tables) world192.txt whole 1.1% less (311,246 -> 307,845 bytes), bible.txt 0.4%. A smaller block is counted first
# at SMALL_COUNTED_LEVEL in that level's version, -1's (cm version 2, 136.8 KB/s over the bench files against version
# 5's 34.8 at 9 on a Zen 1, results/cm.md), the budget's yardstick; the block is then counted again in COUNTED_VERSION
# (where the mixed coder gives up, and, since version 26 mixed in, where it wins too: its frame must beat that count;
# Settings.recount_for; lmzip.coding.stream; a block
# of tokens too short for the model is counted so at once): over the bench's small files 2-16% fewer bytes (book2
# 129,179 -> 122,002, obj2 52,013 -> 47,663) in 1.4-2.9x -1's time, 3.1-4.4x where the mixed coder raced and lost.
# A block of over COUNTED_LARGE bytes is counted at LARGE_COUNTED_LEVEL at least (measured in version 9: level 7's
# 576 MiB of tables, which its blocks fill): bible.txt 647,904 -> 643,357 bytes, the default's compressing peak
# 1,018 -> 1,040 MiB (the groups' tables, made after these are freed, set it), world192.txt 307,850 -> 303,931;
# level 8 wrote bible.txt in 640,786 at 1,483 MiB. A smaller block's recount keeps to COUNTED_LEVEL, by its size. A
# level may count large blocks higher (lmzip.levels.Level.large: -9 at 8, Settings.large_level).
# The counted frames ran cm version 10 (not the mixed frames' 9 then): over the bench through the command line the
# default wrote 0.57% less (1.378 -> 1.370 bits per byte; bible 643,357 -> 637,055, world192 -1.6%, obj2 -1.1%; pic
# +0.7%, grammar.lsp +1.7%), in ~1.3x the time where a file stays counted (bible.txt 51.4 -> 65.6 s compressing,
# 41.3 -> 57.0 s decompressing), level 7's tables 771 MiB (version 9's 576): bible.txt's peaks 1,024 -> 1,188 MiB
# compressing, 736 -> 926 decompressing. Version 11 in both the counted and the mixed frames: 1.370 -> 1.366 (3,299,445
# -> 3,288,402 bytes; bible 637,055 -> 632,412, kennedy.xls -1.3%, enwik6 -0.55%; obj1 +0.5%, grammar.lsp +0.5%, sum
# +0.4%: version 11's slower mixers on small binaries), compressing 396 -> 432 s, decompressing 357 -> 393 s.
# Version 12 in the counted frames (one table the hashed models share, four sparse contexts; the mixed frames stay in
# 11): over the bench through the command line 1.366 -> 1.362 (3,288,402 -> 3,281,039 bytes; obj2 -1.8%, xiyouji -0.4%,
# world192 -0.4%, bible -0.3%; grammar.lsp +0.5%), compressing 432 -> 478 s; level 7's tables 810 -> 880 MiB, yet
# bible.txt's peaks stay 1,811 MiB compressing (1,820 in version 11, the same sitting: the mixed groups set it),
# 1,040 decompressing (/usr/bin/time -v lmzip -c). Version 13 in the counted frames (two group mixers, a second final
# weight set): 1.362 -> 1.359 (3,281,039 -> 3,273,020 bytes; bible -0.33%, world192 -0.52%, book2 -0.50%), 42/42 exact.
# Version 14 (four final weight sets): 1.359 -> 1.358 (3,270,393 bytes; world192 -0.17%, bible -0.09%), 42/42 exact.
# Version 15 (first-layer weights from 1/32; a large block's tables as version 14's): 1.358 -> 1.357 (3,268,577
# bytes; kennedy.xls -1.1%, obj2 -0.36%, pic -0.35%, book2 -0.14%, world192 -0.09%), 42/42 exact. Version 26, with the
# mixed frames' (above): level 6's tables 808 MiB, 7's 1,260 at most; a small block the mixed coder won against the
# light pass is recounted too, the smaller frame kept (book2 127,911 -> 117,661 bytes).
COUNTED_LEVEL, COUNTED_VERSION, COUNTED_LARGE = 6, 27, 1 << 20
LARGE_COUNTED_LEVEL = 7
SMALL_COUNTED_LEVEL = cm_format.DEFAULT_LEVEL
LEAD = 1  # with mix: percent below counting's cost the mixed coder must keep to go on (mix.Budget)


@dataclass(frozen=True)
class AdaptConfig:
    """What the header records about learning while coding."""

    lr: float = 3e-4
    steps: int = 32  # coded steps between two optimizer steps
    optimizer: str = "adam"


# Measured on alice29.txt (benchmarks/README.md): a trained model is fine-tuned with small steps on
# wide batches (FINE_TUNE); seeded random weights learn faster with larger, more frequent steps
# over few long segments (more sequential optimizer steps: 2.86 bpb for lstm-nano).
FINE_TUNE = AdaptConfig()
FROM_SCRATCH = AdaptConfig(lr=3e-3, steps=8)
SCRATCH_ROWS = 16  # segments side by side when learning from scratch
# One group by default: one model learns from every segment. Two groups are two models, each learning
# half the file, that take as many sequential steps as one (the rows, not the steps, are split), so on
# two cores they are no faster (alice29.txt: 15.9 against 15.5 s) and cost 3.044 against 2.861 bpb.
SCRATCH_GROUPS = 1
# Learning from scratch keeps arithmetic 2 (21-bit float64 learning products): arithmetic 4's int8-limb
# products (14/13 bits) cost gpt-nano 5% on alice29.txt (seed 0: 4.706 against 4.450 bpb; seed 1: 4.393
# against 4.191), where fine-tuning a trained model loses 0.05%
SCRATCH_ARITH = 1


def segment_length(n_tokens: int, min_segment: int = MIN_SEGMENT, max_batch: int = MAX_BATCH) -> int:
    """How long each side-by-side segment is: long enough for context, few enough rows."""
    return max(1, min(max(n_tokens, 1), max(min_segment, math.ceil(n_tokens / max_batch))))


def auto_groups(n_tokens: int, n_segments: int) -> int:
    """Independent segment groups, from the input alone (never the core count, so every machine
    writes the same file): one below PARALLEL_FROM tokens, else one per ROWS_PER_GROUP segments."""
    if n_tokens < PARALLEL_FROM:
        return 1
    return max(1, min(MAX_GROUPS, n_segments // ROWS_PER_GROUP, n_segments))


@dataclass(frozen=True)
class Settings:
    """How to code: the mode (mix, adapt, seed), the layout (segment, rows, groups) and where it runs
    (device, threads: they change the speed, never the bits)."""

    mix: bool = False  # mix the counting models in, bit by bit (lmzip.coding.mix; format 11)
    adapt: AdaptConfig | None = None  # learn while coding (lmzip.coding.learn)
    seed: int | None = None  # start from the preset's seeded random weights (with adapt)
    segment: int | None = None  # tokens per segment; None: chosen from the input size
    rows: int | None = None  # at most this many segments side by side (longer segments instead)
    groups: int | None = None  # None: chosen from the input size
    device: str = "cpu"
    threads: int | None = None  # intra-op threads per process; None: the cores, shared by the processes
    counts_arith: int = ARITH_EXACT  # the arithmetic of the counts (1: old files, and learning from scratch)
    block_size: int = BLOCK_SIZE  # bytes per independently coded block
    counting: int | None = None  # code by counting alone (lmzip.cm) at this level 1..9, with no model
    mix_level: int = MIX_LEVEL  # with mix: the counting level whose tables are mixed in
    mix_version: int = MIX_VERSION  # with mix: the cm version of the counting models mixed in (format 11's: 1)
    match: bool = False  # decoding a file of format 8-10 with mix: its token match model (lmzip.coding.legacy)
    counted_level: int = COUNTED_LEVEL  # with mix: the level a block is also counted alone at (over COUNTED_LARGE bytes
    # large_level at least; a smaller one's recount no higher)
    lead: int = LEAD  # with mix: how far ahead of counting the mixed coder must stay (levels may set < 0)
    large_level: int = LARGE_COUNTED_LEVEL  # with mix: the least level a block over COUNTED_LARGE bytes is counted at
    trial: str | None = None  # with mix: a faster model first coded to the judging point of each block (the
    # budget's start); where it is behind counting there, the block stays counted without this model's slower run
    primed: bool = False  # with mix: a block counted alone is counted in cm version 29 (PRIMED: over a primer first,
    # where one fits it, lmzip.cm.primers), not COUNTED_VERSION

    @classmethod
    def make(cls, *, mix: bool = False, adapt: bool = False, adapt_lr: float | None = None,
             adapt_steps: int | None = None, seed: int | None = None, segment: int | None = None,
             adapt_block: int | None = None, rows: int | None = None, groups: int | None = None, device: str = "cpu",
             threads: int | None = None, block_size: int | None = None, counting: int | None = None,
             tables: int | None = None, lead: int | None = None, trial: str | None = None,
             large: int | None = None, primed: bool = False) -> Settings:
        """The settings for these options, every default applied here and nowhere else (``adapt_block``: the
        former name of ``adapt_steps``)."""
        adapt_steps = adapt_block if adapt_steps is None else adapt_steps
        if adapt_steps is not None and not 1 <= adapt_steps <= 65535 or adapt_lr is not None and not adapt_lr > 0:
            raise ValueError("--adapt-steps must be 1..65535 and --adapt-lr positive")
        if (adapt_steps is not None or adapt_lr is not None) and not adapt:
            raise ValueError("--adapt-lr and --adapt-steps need --adapt")
        if seed is not None and not adapt:
            raise ValueError("--seed needs --adapt (random weights that never learn predict nothing)")
        if segment is not None and segment < 1 or groups is not None and groups < 1 or rows is not None and rows < 1:
            raise ValueError("--segment, rows and groups must be positive")
        if threads is not None and not 1 <= threads <= 64:
            raise ValueError("--threads must be 1..64")
        if block_size is not None and not 1024 <= block_size <= MAX_BLOCK:
            raise ValueError("--block-size must be 1 KiB .. 4 GiB")
        if counting is not None and not 1 <= counting <= 9:
            raise ValueError("the counting level must be 1..9")
        if tables is not None and not (mix and 1 <= tables <= 9):
            raise ValueError("the counting tables' level must be 1..9, and needs --mix")
        if large is not None and not (mix and 1 <= large <= 9):
            raise ValueError("the level large blocks are counted at must be 1..9, and needs --mix")
        if trial is not None and not mix:
            raise ValueError("a trial model needs --mix")
        if primed and not mix:
            raise ValueError("primed counting of blocks given up needs --mix (the counting levels run unprimed)")
        if counting is not None and (mix or adapt):
            raise ValueError("counting codes without a language model: --mix and --adapt need one")
        cfg = None
        if adapt:
            base = FROM_SCRATCH if seed is not None else FINE_TUNE
            cfg = AdaptConfig(adapt_lr or base.lr, adapt_steps or base.steps)
        counts = ARITH_EXACT
        if seed is not None:  # learning from scratch: unless told otherwise, few long segments in one group
            rows = SCRATCH_ROWS if rows is None and segment is None else rows
            groups = SCRATCH_GROUPS if groups is None else groups
            counts = SCRATCH_ARITH
        return cls(mix, cfg, seed, segment, rows, groups, device, threads, counts, block_size or BLOCK_SIZE, counting,
                   tables or MIX_LEVEL, counted_level=max(tables or 0, COUNTED_LEVEL),
                   lead=LEAD if lead is None else lead, trial=trial, large_level=large or LARGE_COUNTED_LEVEL,
                   primed=primed)

    def counted_for(self, n: int) -> tuple[int, int | None]:
        """With mix: the cm level and version a block of ``n`` bytes is also counted alone at (None: the level's)."""
        if n > COUNTED_LARGE:
            return max(self.counted_level, self.large_level), self.counted_version
        return SMALL_COUNTED_LEVEL, None

    def recount_for(self, n: int) -> tuple[int, int] | None:
        """With mix: where a block of ``n`` bytes ends up counted, the level and version it is counted again at
        (a small block's first pass, the budget's yardstick, is the light one), or None: counted so already."""
        # tables no larger than the block fills (11 KB: level 4, the same bytes as 6 without 6's setting up)
        return None if n > COUNTED_LARGE else (min(self.counted_level, max(1, n.bit_length() - 10)),
                                                self.counted_version)

    @property
    def counted_version(self) -> int:
        """With mix: the cm version a block counted alone is written in (lmzip.cm.codec picks version 27 where
        primed and no primer fits)."""
        return cm_format.PRIMED if self.primed else COUNTED_VERSION

    @property
    def arith(self) -> int:
        """The arithmetic the counts are computed in (recorded in the header)."""
        return LEARNING[self.counts_arith] if self.adapt else self.counts_arith

    def layout(self, n_tokens: int) -> tuple[int, int]:
        """(segment length, groups) for an input of ``n_tokens`` tokens."""
        # fewer rows make longer segments, never shorter ones than MIN_SEGMENT; learning from scratch (seed)
        # keeps its rows however short its segments come out: steps, not context, decide there
        least = 1 if self.seed is not None else MIN_SEGMENT
        seg = self.segment or (segment_length(n_tokens, least, self.rows) if self.rows else segment_length(n_tokens))
        n_segments = -(-n_tokens // seg)
        return seg, max(1, min(n_segments, self.groups or auto_groups(n_tokens, n_segments)))
