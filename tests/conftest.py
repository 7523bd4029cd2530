"""Small seeded models, built in memory or saved to a temporary model folder."""

from __future__ import annotations

import pytest
import torch

from lmzip.models.checkpoint import from_predictor, save_model
from lmzip.models.model import GPTConfig, LSTMConfig, build_model
from lmzip.models.tokenizer import ByteTokenizer, train_bpe

pytest_plugins = ["tests.ray_head"]  # the Ray head of the cluster tests (bench, compress and decompress --ray)

TEXT = (b"The quick brown fox jumps over the lazy dog. " * 20 + "Ünïcödé текст 中文字符 🎉\n".encode() * 5)


def tiny(arch: str, context: int = 16, vocab: int = 256, tok=None, steps: int = 40):
    """A seeded predictor fitted for a few steps on TEXT (so it really compresses): deterministic."""
    torch.manual_seed(1234)
    if arch == "gpt":
        m = build_model(GPTConfig(vocab_size=vocab, n_layer=1, n_embd=32, n_head=2, n_kv_head=1, context=context))
    else:
        m = build_model(LSTMConfig(vocab_size=vocab, n_layer=1, n_embd=32, context=context))
    ids = torch.as_tensor((tok or ByteTokenizer()).encode(TEXT))
    opt = torch.optim.Adam(m.parameters(), lr=1e-2)
    for i in range(steps):
        starts = torch.arange(8) * ((len(ids) - context) // 8) + i % 7
        y = torch.stack([ids[s : s + context] for s in starts.tolist()])
        x = torch.cat([torch.full((8, 1), m.bos), y[:, :-1]], 1)
        loss = torch.nn.functional.cross_entropy(m(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return m.eval()


# the mixed loop's first run, where numba compiles it (or loads it from its cache); a child runs it beside this process
MIXED_FIRST = """
from pathlib import Path
from lmzip.coding import codec
from lmzip.coding import format as fmt
from lmzip.coding.settings import Settings
from lmzip.models.checkpoint import load_model
from tests.conftest import TEXT
data, model = TEXT[:300], load_model(Path("tests") / "data" / "golden-gpt")
blob = codec.encode(data, model, Settings(mix=True, segment=64), workers=1)[0]
assert codec.decode(*fmt.unpack(blob), model, workers=1) == data
"""


# format 11's mixed loop (lmzip.cm.mix1), which its golden files decode through
MIX1_FIRST = """
from pathlib import Path
import lmzip
from tests.coding.test_golden import ORIGINAL
from tests.make_golden import golden_model
blob = (Path("tests") / "data" / "golden-gpt-mix-v11-arith3.lmz").read_bytes()
assert lmzip.decompress(blob, model=golden_model("gpt", "-mix"), jobs=1) == ORIGINAL * 2
"""


@pytest.fixture(scope="session", autouse=True)
def compiled_loops():
    """Counting's loop, the mixed loop and format 11's compiled (or loaded from numba's cache) once, here, before
    any test starts lmzip in other processes: on a clean clone, two of them compiling counting's loop side by side
    took the SIGKILL test 78 s instead of 31 (tests/cli/test_crash.py). The three compile side by side, two in child
    processes (26 s, 37 s and 21 s one after the other on a clean clone; numba writes each cache file whole)."""
    import subprocess
    import sys
    from pathlib import Path

    from lmzip import cm

    root = Path(__file__).resolve().parent.parent
    children = [subprocess.Popen([sys.executable, "-c", code], cwd=root, stderr=subprocess.PIPE, text=True)
                for code in (MIXED_FIRST, MIX1_FIRST)]
    data = TEXT[:300]
    assert cm.decompress(cm.compress(data, 1)) == data
    for child in children:
        _, err = child.communicate(timeout=600)
        assert child.returncode == 0, err[-2000:]


@pytest.fixture(scope="session")
def bpe():
    return train_bpe(iter([TEXT * 3]), 300)


@pytest.fixture(scope="session", params=["gpt", "lstm"])
def byte_model(request):
    return from_predictor(tiny(request.param), ByteTokenizer(), f"tiny-{request.param}")


@pytest.fixture(scope="session")
def gpt_model():
    return from_predictor(tiny("gpt"), ByteTokenizer(), "tiny-gpt")


@pytest.fixture(scope="session")
def bpe_model(bpe):
    return from_predictor(tiny("gpt", vocab=bpe.vocab_size, tok=bpe), bpe, "tiny-bpe")


@pytest.fixture()
def model_dir(tmp_path, monkeypatch):
    """A model folder 'tiny-gpt' installed through LMZIP_MODELS; returns the folder."""
    root = tmp_path / "models"
    save_model(tiny("gpt"), ByteTokenizer(), root / "tiny-gpt")
    monkeypatch.setenv("LMZIP_MODELS", str(root))
    return root / "tiny-gpt"


@pytest.fixture(scope="session")
def hf_checkpoints(tmp_path_factory):
    """Tiny random GPT-2 and Llama checkpoints saved by transformers (kind -> folder); skipped without it."""
    pytest.importorskip("transformers")
    from tests.hf_checkpoints import make_checkpoint, train_tokenizer

    root, tok = tmp_path_factory.mktemp("hf"), train_tokenizer()
    return {kind: make_checkpoint(kind, root / kind, tok) for kind in ("gpt2", "llama")}


@pytest.fixture
def short_primers(monkeypatch):
    """Counting's primers cut to 2 KiB of every 32 KiB (each kind of the text primer kept): a primed stream's
    mechanism at a fraction of the real primers' 256 KiB run; their bytes stay pinned by tests/cm/test_primers.py."""
    import numpy as np

    from lmzip.cm import primers

    real = primers.load

    def short(number: int) -> np.ndarray:
        whole = real(number)
        return np.concatenate([whole[i : i + 2048] for i in range(0, len(whole), 32768)])

    monkeypatch.setattr(primers, "load", short)
