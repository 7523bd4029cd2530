"""A two-node Ray cluster on loopback for the `cluster` tests (bench, compress and decompress --ray): a head
and a second node (lmzip.bench.loopback), with a token of this test's own, one CPU each, stopped (the whole
session) when the tests end."""

from __future__ import annotations

import pytest

from lmzip.bench.loopback import environment, loopback_cluster


@pytest.fixture(scope="session")
def ray_env(tmp_path_factory):
    """The environment of the nodes and of lmzip: a token of this test's own (Ray's services listen on every
    interface whatever the node address, so they are not left open; nothing is written to ~/.ray), no draining
    on SIGTERM (30 s), no usage stats, and lmzip importable by the workers."""
    pytest.importorskip("ray")
    return environment(tmp_path_factory.mktemp("ray") / "none")


@pytest.fixture(scope="session")
def ray_head(ray_env):
    """A head and a second node on loopback (loopback_cluster), shared by the cluster tests."""
    with loopback_cluster(ray_env) as address:
        yield address
