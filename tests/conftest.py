"""Shared fixtures: fresh copies of the shipped workspace and an in-process CLI runner."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import write_guard
from heavy_tests import HEAVY_MODULES, HEAVY_TESTS, LONGEST_MODULES

REPO = Path(__file__).resolve().parent.parent
FIXTURE_WORKSPACE = REPO / "fixtures" / "workspace"


_GUARD = pytest.StashKey[write_guard.Guard]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "allow_system_temp: the test may also write in the system temp dir"
    )
    write_guard.install()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if module in HEAVY_MODULES or item.nodeid.startswith(HEAVY_TESTS):
            item.add_marker(pytest.mark.heavy)
    # Under `-n 2` (README's command) the workers take modules in this order: the longest
    # first, so that no minute-long module starts last and runs alone at the end.
    items.sort(key=_start_order)


def _start_order(item: pytest.Item) -> int:
    module = item.nodeid.split("::", 1)[0]
    if module in LONGEST_MODULES:
        return LONGEST_MODULES.index(module)
    return len(LONGEST_MODULES) + (0 if item.get_closest_marker("heavy") else 1)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Every write of the test, its fixtures included, lands in the pytest basetemp."""
    basetemp = item.config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    roots = [str(basetemp), str(Path.cwd() / ".hypothesis"), str(REPO / ".hypothesis")]
    system_temp = item.get_closest_marker("allow_system_temp") is not None
    with write_guard.guarding(roots, system_temp=system_temp) as guard:
        item.stash[_GUARD] = guard
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A refused write fails the test even if the code under test caught the exception."""
    outcome = yield
    report = outcome.get_result()
    guard = item.stash.get(_GUARD, None)
    if guard is not None and guard.violations:
        report.outcome = "failed"
        report.longrepr = "\n".join(guard.violations)
        guard.violations.clear()


from cli_runner import CliResult, invoke  # noqa: E402  (re-exported for fixtures)


@pytest.fixture
def cli() -> Callable[[list[str]], CliResult]:
    return invoke


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the shipped fixture workspace."""
    dest = tmp_path / "ws"
    shutil.copytree(
        FIXTURE_WORKSPACE, dest, symlinks=True, ignore=shutil.ignore_patterns(".evidence-cache")
    )
    return dest


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Build a folder from a ``{relative path: text}`` dict in one line."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    """moto's S3 in server mode on a free loopback port: a real HTTP endpoint for boto3."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Any]:
    """A throwaway PostgreSQL cluster loaded with the fixture warehouse (tests/pg_cluster.py);
    started on first use, stopped at the end of the run."""
    from pg_cluster import start_cluster

    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()
