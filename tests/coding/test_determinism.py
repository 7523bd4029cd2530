"""The exactness rule (lmzip/exact.py): encoder and decoder see the same integer counts, which sum
to what the coder needs, and the coder pays exactly what those counts say."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from lmzip.arith import exact, versions
from lmzip.coding import codec, mix
from lmzip.coding import format as fmt
from lmzip.coding.settings import ARITH_EXACT, ARITH_LEARN, Settings
from tests.conftest import TEXT


def record_rows(monkeypatch):
    """Every row of counts the coder is handed, by either coder (the range coder, or lmzip.coding.mix's)."""
    rows: list[np.ndarray] = []
    real = codec.Encoder.code, codec.Decoder.code, mix.GroupCoder.code

    def mixed(self, t, active, counts):
        rows.append(np.array(counts))
        return real[2](self, t, active, counts)

    def enc(self, symbols, counts):
        rows.append(np.array(counts))
        return real[0](self, symbols, counts)

    def dec(self, symbols, counts):
        rows.append(np.array(counts))
        return real[1](self, symbols, counts)

    monkeypatch.setattr(codec.Encoder, "code", enc)
    monkeypatch.setattr(codec.Decoder, "code", dec)
    monkeypatch.setattr(mix.GroupCoder, "code", mixed)
    return rows


@pytest.mark.parametrize("mixing", [False, True])
def test_encoder_and_decoder_counts_are_identical_integers(byte_model, monkeypatch, mixing):
    rows = record_rows(monkeypatch)
    blob, head, _ = codec.encode(TEXT[:300], byte_model, Settings(segment=40, mix=mixing))
    assert head.mix == mixing
    enc_rows = list(rows)
    rows.clear()
    codec.decode(*fmt.unpack(blob), byte_model)
    assert len(enc_rows) == len(rows) == 40
    for a, b in zip(enc_rows, rows, strict=True):
        assert a.tobytes() == b.tobytes()
        assert np.all(a == np.round(a)) and a.min() >= 0
        assert np.all(a.astype(np.int64).sum(axis=1) == exact.count_total(a.shape[1]))


def test_thread_count_does_not_change_the_file_and_is_restored(gpt_model, monkeypatch):
    before = torch.get_num_threads()
    one = codec.encode(TEXT[:200], gpt_model, Settings(threads=1))[0]
    two, head, _ = codec.encode(TEXT[:200], gpt_model, Settings(threads=2))
    assert one == two and head.arith == ARITH_EXACT
    assert torch.get_num_threads() == before
    assert codec.decode(*fmt.unpack(two), gpt_model) == TEXT[:200]
    seen: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", lambda n, set_=torch.set_num_threads: (seen.append(n), set_(n)))
    for n in (1, 3):  # the decoder takes a thread count too (the bench measures both directions on one)
        assert codec.decode(*fmt.unpack(two), gpt_model, threads=n) == TEXT[:200]
        assert seen[-2:] == [n, before]


def test_coded_bits_are_what_the_coder_pays(gpt_model):
    data = TEXT * 3
    blob, head, bits = codec.encode(data, gpt_model, Settings())
    payload = len(blob) - head.size
    # the coder writes the integer counts' information content, plus its flush words
    assert bits / 8 <= payload <= bits / 8 + 8 * head.groups + 8


def test_counts_sum_exactly_and_favour_the_largest_logit():
    logits = torch.tensor([[0.0, 64.0, -10000.0, 64.0], [5.0, 5.0, 5.0, 5.0]], dtype=torch.float64)
    c = exact.counts_from_logits(logits)
    assert c.sum(-1).tolist() == [exact.count_total(4)] * 2
    assert c[0, 2] == 0 and c[0, 1] >= c[0, 3] and c[0, 1] > 2.7 * c[0, 0]  # one nat apart: e times
    assert c[1].max() - c[1].min() <= 4


def test_a_full_pass_gives_the_integers_of_single_steps(gpt_model):
    """Exact arithmetic makes batch shape irrelevant: re-priming in one pass equals stepping."""
    ep = gpt_model.exact_for("cpu")
    toks = torch.tensor([[3, 70, 71, 72, 73, 74]])
    st = ep.start(1)
    with torch.inference_mode():
        for t in toks[0]:
            last, st = ep.step(t[None], st)
        st2 = ep.start(1)
        ep._forward(toks, st2, 0)
    for i in range(len(st.k)):
        assert torch.equal(st.k[i][:, :, :6], st2.k[i][:, :, :6]) and torch.equal(st.v[i][..., :6], st2.v[i][..., :6])


def test_tables_are_exact_integers_from_decimal():
    assert exact.exp_table(16)[0] == 1 << 16 and exact.exp_table(16)[-1] == 0
    assert exact.exp_table(16)[64] == round(65536 / 2.718281828459045)
    for name in ("sigmoid", "tanh", "gelu"):
        t = exact.function_table(name)
        assert t.dtype == torch.float64 and torch.equal(t, torch.round(t))
    x = torch.tensor([-3.0, 0.0, 0.5, 3.0], dtype=torch.float64) * 65536
    assert torch.allclose(exact.apply_table("sigmoid", x) / 65536, torch.sigmoid(x / 65536), atol=1e-4)
    assert torch.allclose(exact.apply_table("gelu", x) / 65536, torch.nn.functional.gelu(x / 65536), atol=1e-4)


@pytest.mark.parametrize("quant", [versions.Q9, versions.Q8], ids=["arith1", "arith3"])
def test_products_past_one_chunk_stay_exact(quant):
    """int_matmul splits K so float32 never rounds: the worst case (every term at its limit) is exact."""
    K = 3 * quant.chunk + 17
    q = torch.full((2, K), float(quant.act))
    w = torch.full((3, K), float(quant.wq))
    want = torch.full((2, 3), float(quant.act * quant.wq * K), dtype=torch.float64)
    assert torch.equal(exact.int_matmul(q, w, quant), want)
    # one chunk more would not be exact in float32: the bound is what keeps it so
    assert quant.act * quant.wq * (2 * quant.chunk) >= 1 << 24


def test_the_encoders_passes_give_the_counts_of_single_steps(gpt_model):
    """ExactGPT.steps (the encoder's many positions at once) equals step after step, across re-primes."""
    ep = gpt_model.exact_for("cpu")
    feed = torch.tensor([list(TEXT[:40]), list(TEXT[40:80])])
    feed[:, 0] = ep.bos
    with torch.inference_mode():
        st = ep.start(2)
        one = torch.stack([ep.step(feed[:, t], st)[0] for t in range(40)], dim=1)
        st2 = ep.start(2)
        many = torch.cat([ep.steps(feed[:, a : a + 7], st2)[0] for a in range(0, 40, 7)], dim=1)
    assert ep.cfg.context == 16 and torch.equal(one.double(), many.double())

def test_learning_while_coding_does_not_depend_on_the_thread_count(gpt_model):
    from dataclasses import replace

    settings = Settings.make(adapt=True, adapt_steps=4, segment=100)
    one, head, _ = codec.encode(TEXT[:300], gpt_model, settings)
    two = codec.encode(TEXT[:300], gpt_model, replace(settings, threads=2))[0]
    assert one == two and head.arith == ARITH_LEARN
    assert codec.decode(*fmt.unpack(two), gpt_model) == TEXT[:300]


def test_re_priming_a_few_rows_at_a_time_gives_the_same_counts(monkeypatch):
    """The window's re-priming pass, cut into passes of a few rows (bounded memory) and stopping at the
    last layer's k, v, and the head's counts a few rows at a time give the integers of whole passes."""
    from lmzip.models import qmodel
    from lmzip.models.checkpoint import from_predictor
    from lmzip.models.model import GPTConfig, build_model
    from lmzip.models.tokenizer import ByteTokenizer

    torch.manual_seed(7)  # two layers: the pass stops inside the second
    m = build_model(GPTConfig(vocab_size=256, n_layer=2, n_embd=32, n_head=2, n_kv_head=1, context=16))
    ep = from_predictor(m, ByteTokenizer(), "two-layers").exact_for("cpu", 3)  # arithmetic 3 re-primes (6 shifts)
    feed = torch.tensor([list(TEXT[i : i + 40]) for i in range(0, 200, 40)])
    feed[:, 0] = ep.bos

    def counts(positions: int) -> torch.Tensor:
        monkeypatch.setattr(qmodel, "REPRIME_POSITIONS", positions)
        with torch.inference_mode():
            return torch.cat([ep.steps(feed[:, a : a + 8], st)[0] for st in [ep.start(5)] for a in range(0, 40, 8)],
                             dim=1)

    few_rows = counts(16)  # 2 rows a pass
    assert ep.cfg.context == 16 and torch.equal(counts(1 << 20), few_rows)  # 5 rows at once
    real = qmodel.ExactGPT._forward  # the pass that stops at the last layer's k, v fills the caches alike
    monkeypatch.setattr(qmodel.ExactGPT, "_forward", lambda self, idx, st, p0, out=True: real(self, idx, st, p0))
    assert torch.equal(counts(16), few_rows)
    monkeypatch.setattr(qmodel, "HEAD_POSITIONS", 8)  # the head's counts one row (8 positions) at a time
    assert torch.equal(counts(16), few_rows)


def test_arithmetic_6_shifts_a_full_window_where_3_re_primed(gpt_model):
    """A full window: arithmetic 3 re-primes the half it keeps in a pass of the network (the second layer's
    values then see only that half), 6 shifts it (the values move as they are, the keys rotated back); each
    decodes what it wrote, and the files differ."""
    from lmzip.models.checkpoint import from_predictor
    from lmzip.models.model import GPTConfig, build_model
    from lmzip.models.tokenizer import ByteTokenizer

    torch.manual_seed(7)
    m = build_model(GPTConfig(vocab_size=256, n_layer=2, n_embd=32, n_head=2, n_kv_head=1, context=16))
    two = from_predictor(m, ByteTokenizer(), "two-layers")
    ctx, half = 16, 8
    feed = [two.exact_for("cpu").bos, *TEXT[:ctx]]
    for arith, moved in ((3, False), (6, True)):
        pred = two.exact_for("cpu", arith)
        st = pred.start(1)
        with torch.inference_mode():
            for tok in feed[:ctx]:
                pred.step(torch.tensor([tok]), st)
            full = [v.clone() for v in st.v]
            pred.step(torch.tensor([feed[ctx]]), st)
        assert st.pos == half + 1
        assert torch.equal(st.v[1][..., 1:half], full[1][..., 1 + half :]) == moved
    blobs = [codec.encode(TEXT[:300], gpt_model, replace(Settings(segment=300), counts_arith=a))[0] for a in (3, 6)]
    assert blobs[0] != blobs[1] and [fmt.unpack(b)[0].arith for b in blobs] == [3, 6]
    assert all(codec.decode(*fmt.unpack(b), gpt_model) == TEXT[:300] for b in blobs)
