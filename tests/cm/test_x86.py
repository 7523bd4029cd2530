"""Version 21's x86 filter (lmzip.cm.x86): its inverse gives back every input, it runs on x86 code alone, calls to
one function read alike after it, and the payload's first byte records it."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import numpy as np
import pytest

from lmzip import cm
from lmzip.cm import format as fmt
from lmzip.cm import x86
from lmzip.errors import FormatError
from tests.conftest import TEXT

GOLDEN = Path(__file__).parent.parent / "data" / "x86-cm21.lmz"  # CODE at cm level 1 in version 21: the filter on


SIZE = 18  # each function's bytes in CODE, its call's distance at bytes 9-12


def _code(functions: int = 400) -> bytes:
    """x86-64-like machine code: short functions (SIZE bytes), each calling one of eight others (E8 + a 32-bit
    distance)."""
    out = bytearray()
    for i in range(functions):
        out += b"\x55\x48\x89\xe5\x48\x83\xec\x10"  # push rbp; mov rbp, rsp; sub rsp, 16
        out += b"\xe8" + ((64 * (i % 8) - (len(out) + 5)) & 0xFFFFFFFF).to_bytes(4, "little")
        out += b"\x89\x45\xfc\xc9\xc3"  # mov [rbp-4], eax; leave; ret
    return bytes(out)


CODE = _code()


def _array(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8)


@pytest.mark.parametrize("seed", range(6))
def test_the_inverse_gives_back_every_input(seed):
    rng = random.Random(seed)  # dense E8/E9 bytes and 00/FF bytes: sites that overlap and sit side by side
    data = bytes(rng.choice((0xE8, 0xE9, 0x00, 0xFF, rng.randrange(256))) for _ in range(5000))
    filtered = x86.forward(_array(data), x86.X86)
    assert filtered.tobytes() != data
    assert x86.inverse(filtered.copy(), x86.X86).tobytes() == data
    assert x86.forward(_array(data), x86.NONE).tobytes() == data


def test_calls_to_one_function_read_alike_after_the_filter():
    calls = [SIZE * i + 9 for i in range(0, 400, 8)]  # each call to the first function: its distance
    filtered = x86.forward(_array(CODE), x86.X86)
    assert len({filtered[c : c + 4].tobytes() for c in calls}) == 1  # one target, where the distances all differ
    assert len({CODE[c : c + 4] for c in calls}) == 50


@pytest.mark.parametrize("code, rewritten", [(b"\xe8", True), (b"\xe9", True), (b"\x0f\x85", False), (b"\xe7", False)])
def test_a_call_or_jump_distance_becomes_its_target(code, rewritten):
    data = b"\x90" * 3 + code + (-2).to_bytes(4, "little", signed=True)  # 2 bytes before its end
    target = data[:-4] + (len(data) - 2).to_bytes(4, "little")
    assert x86.forward(_array(data), x86.X86).tobytes() == (target if rewritten else data)


@pytest.mark.parametrize("data, filt", [(CODE, x86.X86), (TEXT * 20, x86.NONE), (bytes(range(256)) * 40, x86.NONE),
                                        (b"", x86.NONE), (b"\xe8\0\0\0\0", x86.X86)])
def test_the_filter_runs_on_x86_code_alone(data, filt):
    assert x86.choose(_array(data)) == filt


def test_version_21_records_the_filter_and_codes_x86_code_smaller():
    blob, text = cm.compress(CODE, 1, version=21), cm.compress(TEXT, 1, version=21)
    assert blob[fmt.HEADER_BYTES] == x86.X86 and text[fmt.HEADER_BYTES] == x86.NONE
    assert cm.decompress(blob) == CODE and cm.decompress(text) == TEXT
    assert len(blob) < len(cm.compress(CODE, 1, version=20)) * 0.8
    assert text[fmt.HEADER_BYTES + 1 :] == cm.compress(TEXT, 1, version=20)[fmt.HEADER_BYTES :]  # the same models
    assert hashlib.sha256(blob).hexdigest()[:16] == "4aeadba91dd58daa"
    assert GOLDEN.read_bytes() == blob and cm.decompress(GOLDEN.read_bytes()) == CODE


def test_an_unknown_filter_is_refused_in_one_line():
    blob = bytearray(cm.compress(TEXT, 1, version=21))
    blob[fmt.HEADER_BYTES] = 7
    with pytest.raises(FormatError, match="filter 7") as e:
        cm.decompress(bytes(blob))
    assert "\n" not in str(e.value)
