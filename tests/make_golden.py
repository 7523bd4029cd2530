"""Write the committed golden files for the current format version (run by hand, once per version).

Earlier versions' files stay committed forever: they prove old .lmz files keep decoding.
    python -m tests.make_golden
"""

from __future__ import annotations

from pathlib import Path

from lmzip import codec, format, registry
from lmzip.adapt import AdaptConfig
from lmzip.checkpoint import load_model, save_model
from lmzip.tokenizer import ByteTokenizer
from tests.conftest import TEXT, tiny

DATA = Path(__file__).parent / "data"
ADAPT = codec.Settings(adapt=AdaptConfig(1e-3, 16))
BF16 = codec.Settings(dtype="bfloat16")
MIX_SEGMENT = 250  # (1200 up to version 6)
SEED = 7  # random weights of the nano presets, for the learn-from-scratch golden files


def main() -> None:
    DATA.mkdir(exist_ok=True)
    (DATA / "golden.txt").write_bytes(TEXT[:600])
    (DATA / "golden-crlf.txt").write_bytes(b"\r\n".join(TEXT[i : i + 60] for i in range(0, 600, 60)))
    for arch in ("gpt", "lstm"):
        folder = DATA / f"golden-{arch}"
        if not folder.exists():
            save_model(tiny(arch), ByteTokenizer(), folder)
        model = load_model(folder)
        for groups, tag in ((1, ""), (2, "-groups2")):
            blob, head, _ = codec.encode(TEXT[:600], model, codec.Settings(), segment=128, groups=groups)
            assert not head.stored and head.groups == groups
            out = DATA / f"golden-{arch}{tag}-v{format.VERSION}.lmz"
            if not out.exists():  # a golden file is never rewritten
                out.write_bytes(blob)
        blob, head, _ = codec.encode((DATA / "golden-crlf.txt").read_bytes(), model, codec.Settings(), segment=128)
        assert head.crlf
        out = DATA / f"golden-{arch}-crlf-v{format.VERSION}.lmz"
        if not out.exists():
            out.write_bytes(blob)
        # v7+: five segments, so the match model also finds repeats in the other segments
        blob, head, _ = codec.encode(TEXT[:600] * 2, model, codec.Settings(mix=True), segment=MIX_SEGMENT)
        assert head.mix
        out = DATA / f"golden-{arch}-mix-v{format.VERSION}.lmz"
        if not out.exists():
            out.write_bytes(blob)
        blob, head, _ = codec.encode(TEXT[:600] * 2, model, ADAPT, segment=300)
        assert head.adapt
        out = DATA / f"golden-{arch}-adapt-v{format.VERSION}.lmz"
        if not out.exists():
            out.write_bytes(blob)
        blob, head, _ = codec.encode(TEXT[:600], model, BF16, segment=128)
        assert head.dtype == "bfloat16"
        out = DATA / f"golden-{arch}-bf16-v{format.VERSION}.lmz"
        if not out.exists() and format.VERSION >= 6:
            out.write_bytes(blob)
        blob, head, _ = codec.encode(TEXT[:600] * 2, registry.scratch(f"{arch}-nano", SEED), ADAPT, segment=300)
        assert head.adapt and head.seed == SEED
        out = DATA / f"golden-{arch}-seed-v{format.VERSION}.lmz"
        if not out.exists() and format.VERSION >= 6:
            out.write_bytes(blob)


if __name__ == "__main__":
    main()
