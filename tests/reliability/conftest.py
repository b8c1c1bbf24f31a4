"""Fixtures of the reliability tests: the crash harness's templates, references and zygote."""

from __future__ import annotations

from collections.abc import Iterator

import crash_workload as W
import crashkit as K
import pytest
from crashkit import Reference


@pytest.fixture(scope="session")
def zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[K.Pool]:
    """Fork servers, one per core (``crashkit.Pool``)."""
    pool = K.Pool(tmp_path_factory.mktemp("zygote-io"))
    yield pool
    pool.close()


@pytest.fixture(scope="session")
def references(zygote: K.Pool, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Reference]:
    return K.build_references(zygote, tmp_path_factory.mktemp("crash-small"), W.SMALL_UNITS, False)


@pytest.fixture(scope="session")
def wide_references(
    zygote: K.Pool, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Reference]:
    return K.build_references(zygote, tmp_path_factory.mktemp("crash-wide"), W.WIDE_UNITS, True)
