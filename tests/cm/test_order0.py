"""lmzip.cm.order0: cm version 28, the adaptive order-0 model the encoder writes where it codes smaller."""

from __future__ import annotations

import random

import numpy as np
import pytest

from lmzip.cm import codec, model, order0
from lmzip.cm import format as fmt
from lmzip.errors import FormatError, IntegrityError

LETTERS = bytes(range(48, 112))  # 64 symbols: 6 bits a byte, drawn alike


def _drawn(n: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    return bytes(rng.choice(LETTERS) for _ in range(n))


@pytest.mark.parametrize("data", [b"\x00", b"ab", bytes(range(256)) * 3, bytes(5000), _drawn(3000)],
                         ids=["one", "two", "every byte", "zeros", "letters"])
def test_order0_round_trips(data):
    blob = codec.compress(data, 1, version=fmt.ORDER0)
    assert blob[4] == fmt.ORDER0 and codec.decompress(blob) == data


def test_letters_drawn_alike_are_written_in_order0_near_their_entropy():
    """Where every byte is drawn alike from 64 letters, the order-0 model alone codes smaller than level 7's mixers
    (which pay for the noise of ~170 inputs' weights), so the encoder writes version 28, within 1% of 6 bits a byte."""
    data = _drawn(20000)
    blob = codec.compress(data, fmt.HEAVY)
    src = np.frombuffer(data, dtype=np.uint8)
    heavy = len(model.run(True, src, len(src), model.allocate(fmt.HEAVY, fmt.SETTLED, len(src))))
    assert blob[4] == fmt.ORDER0 and len(blob) - fmt.HEADER_BYTES < heavy and codec.decompress(blob) == data
    assert len(blob) - fmt.HEADER_BYTES < 20000 * 6 / 8 * 1.01


def test_text_keeps_the_levels_models():
    data = b"Where bytes depend on the bytes before them, the level's models code smaller. " * 40
    assert codec.compress(data, fmt.HEAVY)[4] == fmt.SETTLED
    assert codec.compress(data, 1)[4] == fmt.LIGHT  # the light levels never try it


@pytest.mark.parametrize("cut", [1, 5, 40])
def test_a_damaged_order0_stream_fails_in_one_line(cut):
    blob = codec.compress(_drawn(500), 1, version=fmt.ORDER0)
    bad = blob[:-cut] if cut != 40 else blob[:40] + bytes([blob[40] ^ 0x55]) + blob[41:]
    with pytest.raises((FormatError, IntegrityError)) as e:
        codec.decompress(bad)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("room", [16, 17, 100, 3000])
def test_a_payload_that_outgrows_its_buffer_is_coded_again_in_more_room(room):
    """The encoder stops where its output has no room for another byte's worst case and codes again in twice the room:
    the same payload whatever the first room (the compiled loop writes without bounds checks)."""
    data = bytes(range(256)) + _drawn(4000, 5) + bytes([255]) * 300
    src = np.frombuffer(data, dtype=np.uint8)
    assert len(order0.encode(src)) > 3000  # more than the smaller rooms hold
    assert order0.encode(src, room=room).tobytes() == order0.encode(src).tobytes()
    assert order0.decode(order0.encode(src, room=room), len(data)).tobytes() == data
