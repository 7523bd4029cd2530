"""lmzip.files: outputs appear whole or not at all, even when two writers race for one name."""

from __future__ import annotations

import os
import threading

import pytest

from lmzip import files
from lmzip.errors import LmzipError


def test_two_writers_racing_for_one_output_leave_one_whole_file(tmp_path):
    dst = tmp_path / "out.lmz"
    a, b = os.urandom(1 << 20), os.urandom(1 << 20)
    seen = set()

    def write(data):
        for _ in range(20):
            files.write_atomic(dst, data, force=True)

    def watch():
        for _ in range(200):
            if dst.exists():
                seen.add(dst.read_bytes() in (a, b))

    threads = [threading.Thread(target=write, args=(a,)), threading.Thread(target=write, args=(b,)),
               threading.Thread(target=watch)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert dst.read_bytes() in (a, b) and seen <= {True}  # every read saw one writer's whole file
    assert [p.name for p in tmp_path.iterdir()] == ["out.lmz"]  # no temporary left behind


def test_an_output_that_cannot_be_created_is_one_line_and_leaves_nothing(tmp_path):
    (tmp_path / "file").write_bytes(b"not a folder")
    with pytest.raises(LmzipError, match="Not a directory"):
        files.write_atomic(tmp_path / "file" / "x.lmz", b"data", force=False)
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
