"""The live PostgreSQL cluster of the catalog tests: one per session, loaded with the
fixture warehouse (see tests/pg_cluster.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pg_cluster import Cluster, start_cluster


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()
