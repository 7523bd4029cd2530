"""Write the committed golden files for the current format version (run by hand, once per version).

Format 8 is the first portable one: its files decode on any machine, and they stay committed
forever to prove it (formats 1-7 were machine-bound pre-releases and are refused). Format 8 has two
sets, arithmetic 1 (lmzip 0.3.0-0.4.0, no suffix) and 3 (``-arith3``); formats 9 (blocks) and 10
(counting frames beside them; tests/coding/test_counting.py has the counting golden file) have
arithmetic 3's; formats 11 and 12 have arithmetic 3's and 6's (the window shifted; format 12's mixed frames
run cm version 9's models, and ``mixed_path``'s cm versions 11's and 26's). Learning while coding (arithmetic
2 and 4) has its own: fine-tuning the golden models, and learning from scratch from a byte
preset's seeded random weights (the "-scratch" files name the preset in their header).
    python -m tests.make_golden
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from lmzip.coding import codec, format
from lmzip.coding.settings import ARITH_EXACT, Settings
from lmzip.models.checkpoint import load_model, save_model
from lmzip.models.tokenizer import ByteTokenizer
from tests.conftest import TEXT, tiny

DATA = Path(__file__).parent / "data"
MIX_SEGMENT = 250  # five segments, so the match model also finds repeats in the other segments

# name tag -> (input, settings): every golden file of the current version
WRITTEN_MIX_LEVEL = 2  # the mixed tables' level the golden files are written with: format 12's (cm version 9's
# tables of level 2, 114 MiB); format 11's were written at 6, which their headers record, so they decode as they are
CASES = {
    "": (lambda: TEXT[:600], Settings(segment=128)),
    "-groups2": (lambda: TEXT[:600], Settings(segment=128, groups=2)),
    "-crlf": (lambda: (DATA / "golden-crlf.txt").read_bytes(), Settings(segment=128)),
    "-mix": (lambda: TEXT[:600] * 2, Settings(mix=True, segment=MIX_SEGMENT, mix_level=WRITTEN_MIX_LEVEL,
                                              mix_version=9)),
    "-adapt": (lambda: TEXT[:600], Settings.make(adapt=True, adapt_lr=1e-3, adapt_steps=8, segment=128)),
    "-scratch": (lambda: TEXT[:600], replace(Settings.make(adapt=True, mix=True, seed=7, segment=200),
                                             mix_level=WRITTEN_MIX_LEVEL, mix_version=9)),
}
MIXED_VERSIONS = (11, 26)  # the cm versions mixed in since format 12's golden files (``mixed_path``: "-mix"'s input)
SCRATCH_PRESET = {"gpt": "gpt-nano", "lstm": "lstm-nano"}
BLOCKS = "-blocks"  # format 9 with several blocks: the input of "" in frames of 256 bytes
BLOCKS_SETTINGS = Settings(segment=128, block_size=256)


def blocks_file(arch: str) -> bytes:
    """The golden input coded as several blocks (lmzip.coding.stream)."""
    import io

    from lmzip.coding import stream

    out = io.BytesIO()
    stream.compress_stream(io.BytesIO(CASES[""][0]()), out, golden_model(arch, ""), BLOCKS_SETTINGS, workers=1)
    return out.getvalue()


def golden_model(arch: str, tag: str):
    """The model a golden file was written with: the tiny golden model, or a preset's random weights."""
    if tag == "-scratch":
        from lmzip.models import registry

        return registry.scratch(SCRATCH_PRESET[arch], CASES[tag][1].seed)
    return load_model(DATA / f"golden-{arch}")


ARITHS = (1, 3)  # the arithmetics of the counts that have format-8 golden files


def golden_path(arch: str, tag: str, version: int = format.VERSION, arith: int = ARITH_EXACT) -> Path:
    return DATA / f"golden-{arch}{tag}-v{version}{'' if arith == 1 else f'-arith{arith}'}.lmz"


def mixed_path(arch: str, version: int) -> Path:
    """The golden file of "-mix"'s input and settings with cm version ``version`` mixed in (format 12)."""
    return DATA / f"mixed-{arch}-cm{version}.lmz"


def mixed_settings(version: int) -> Settings:
    """"-mix"'s settings with cm version ``version`` mixed in."""
    return replace(CASES["-mix"][1], mix_version=version)


def golden_settings(tag: str, arith: int = ARITH_EXACT) -> Settings:
    """The settings of a golden case, in the arithmetic ``arith`` of the counts."""
    return replace(CASES[tag][1], counts_arith=arith)


def main() -> None:
    DATA.mkdir(exist_ok=True)
    (DATA / "golden.txt").write_bytes(TEXT[:600])
    (DATA / "golden-crlf.txt").write_bytes(b"\r\n".join(TEXT[i : i + 60] for i in range(0, 600, 60)))
    for arch in ("gpt", "lstm"):
        folder = DATA / f"golden-{arch}"
        if not folder.exists():
            save_model(tiny(arch), ByteTokenizer(), folder)
        for tag, (data, _) in CASES.items():
            blob, head, _ = codec.encode(data(), golden_model(arch, tag), golden_settings(tag), workers=1)
            assert not head.stored
            out = golden_path(arch, tag)
            if not out.exists():  # a golden file is never rewritten
                out.write_bytes(blob)
        out = golden_path(arch, BLOCKS)
        if not out.exists():
            out.write_bytes(blocks_file(arch))
        for version in MIXED_VERSIONS:
            out = mixed_path(arch, version)
            if not out.exists():
                out.write_bytes(codec.encode(CASES["-mix"][0](), golden_model(arch, "-mix"), mixed_settings(version),
                                             workers=1)[0])


if __name__ == "__main__":
    main()
