"""Learning while coding: exact round trips (the decoder retrains identically), and it learns."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest
import torch

from lmzip.coding import codec
from lmzip.coding import format as fmt
from lmzip.coding.settings import AdaptConfig
from tests.conftest import TEXT

ADAPT = codec.Settings(adapt=AdaptConfig(1e-3, 8))


def test_adapt_round_trips(byte_model, bpe_model):
    for model in (byte_model, bpe_model):
        for data, seg in ((TEXT, 300), (TEXT[:37], None), (TEXT * 2, 50)):
            blob, head, _ = codec.encode(data, model, replace(ADAPT, segment=seg))
            assert head.adapt or head.stored
            assert codec.decode(*fmt.unpack(blob), model) == data


def test_adapt_learns_and_leaves_the_shared_model_alone(gpt_model):
    before = {k: v.clone() for k, v in gpt_model.predictor.state_dict().items()}
    data = TEXT * 3
    static = codec.encode(data, gpt_model, codec.Settings(segment=len(data)))[0]
    adapted = codec.encode(data, gpt_model, codec.Settings(adapt=AdaptConfig(3e-3, 16), segment=len(data)))[0]
    assert len(adapted) < len(static)
    assert all(torch.equal(before[k], v) for k, v in gpt_model.predictor.state_dict().items())


@pytest.mark.parametrize("arch", ["gpt", "lstm"])
def test_decodes_in_a_separate_process(arch, tmp_path):
    from lmzip.models.checkpoint import load_model
    from tests.coding.test_golden import DATA

    model = load_model(DATA / f"golden-{arch}")
    blob, _, _ = codec.encode(TEXT, model, replace(ADAPT, segment=200, groups=2))
    (tmp_path / "x.lmz").write_bytes(blob)
    code = ("import sys; from lmzip.coding import codec, format as f; from lmzip.models.checkpoint import load_model; "
            f"h, p = f.unpack(open({str(tmp_path / 'x.lmz')!r}, 'rb').read()); "
            f"sys.stdout.buffer.write(codec.decode(h, p, load_model({str(DATA / ('golden-' + arch))!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert out == TEXT


def test_learns_from_scratch_and_another_process_rebuilds_the_random_weights(tmp_path):
    from lmzip.models import registry

    model = registry.scratch("lstm-nano", 11)
    assert registry.scratch("lstm-nano", 12).model_id != model.model_id  # the seed decides the weights
    data = TEXT  # 1,105 steps learning: 0.66 of its size (TEXT * 2: 0.67, twice the time)
    blob, head, _ = codec.encode(data, model, codec.Settings(adapt=AdaptConfig(3e-3, 16), segment=len(data)))
    assert head.seed == 11 and head.model_name == "lstm-nano" and len(blob) < len(data) * 0.8  # it learned
    (tmp_path / "x.lmz").write_bytes(blob)
    code = ("import sys, lmzip; "
            f"sys.stdout.buffer.write(lmzip.decompress(open({str(tmp_path / 'x.lmz')!r}, 'rb').read()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert out == data


def test_a_file_whose_random_weights_differ_here_is_refused():
    from lmzip.errors import ModelNotFound
    from lmzip.models import registry

    blob, head, _ = codec.encode(TEXT, registry.scratch("gpt-nano", 1), replace(ADAPT, segment=len(TEXT)))
    head.model_id = bytes(16)
    with pytest.raises(ModelNotFound, match="random weights of preset 'gpt-nano' with seed 1 differ"):
        registry.find_by_id(head.model_id, head.model_name, seed=head.seed)


def _thread(model, progress=None) -> tuple[int, bytes]:
    import threading
    import time

    time.sleep(0.3)  # both groups at once
    return threading.get_ident(), model.model_id


def test_random_weights_code_their_groups_side_by_side():
    from lmzip.coding import parallel
    from lmzip.models import registry

    model = registry.scratch("lstm-nano", 5)  # no folder: the groups share the one in memory
    (here, _), (there, same) = parallel.map_groups(_thread, model, [(), ()], 2)
    assert here != there and same == model.model_id  # two threads
    blob, head, _ = codec.encode(TEXT * 2, model, replace(ADAPT, segment=100, groups=2))
    assert head.groups == 2 and head.seed == 5
    assert codec.encode(TEXT * 2, model, replace(ADAPT, segment=100, groups=2), workers=1)[0] == blob
    assert codec.decode(*fmt.unpack(blob), model, workers=1) == TEXT * 2  # one after another
    assert codec.decode(*fmt.unpack(blob), model, workers=2) == TEXT * 2


def test_progress_is_live_while_groups_code_side_by_side(model_dir):
    from lmzip.coding import parallel
    from lmzip.coding.settings import Settings
    from lmzip.models import registry

    model = registry.load("tiny-gpt")
    seen: list[tuple[int, int]] = []
    # ~1,500 steps a group: several reports (every 0.2 s) while both code, on a fast CPU too
    blob, head, _ = codec.encode(TEXT * 30, model, Settings(segment=1500, groups=2), workers=2,
                                 progress=lambda d, t: seen.append((d, t)))
    assert head.groups == 2 and parallel.REPORT_EVERY > 0
    sizes = codec._sizes(*(lambda lay: (lay.lengths, lay.bounds()))(
        codec.Layout.of(head.n_tokens, head.segment_length, head.groups)))
    done = [d for d, _ in seen]
    assert done == sorted(done) and done[-1] == sum(sizes) and {t for _, t in seen} == {sum(sizes)}
    assert any(0 < d < sum(sizes) for d in done), sorted(set(done))[-5:]  # reports while both code
    assert codec.decode(*fmt.unpack(blob), model, workers=2) == TEXT * 30
