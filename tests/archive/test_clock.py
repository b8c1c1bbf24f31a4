"""``changed_at``: the declaration time of a unit is its file's modification time, to the
second, exactly as ``datetime.fromtimestamp`` renders it (earlier versions' revisions
depend on it), however the stamps are cached (issue 20)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evidence_tool.archive.clock import changed_at

SECOND = 10**9


def _exact(path: Path) -> str:
    when = datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
    return when.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(autouse=True)
def _unpinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("THT_NOW", raising=False)


# Around whole seconds (where rounding to the microsecond can carry), before 1970, and
# ordinary times; several files in one call share the stamp's cache.
_NS = st.one_of(
    st.integers(min_value=0, max_value=4_000_000_000).map(lambda s: s * SECOND - 1),
    st.integers(min_value=0, max_value=4_000_000_000).map(lambda s: s * SECOND + 499),
    st.integers(min_value=0, max_value=4_000_000_000).map(lambda s: s * SECOND - 500),
    st.integers(min_value=-(10**18), max_value=-1),
    st.integers(min_value=0, max_value=4_000_000_000 * SECOND),
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(times=st.lists(_NS, min_size=1, max_size=6))
def test_each_file_gets_exactly_its_own_second(tmp_path: Path, times: list[int]) -> None:
    stamp = changed_at(tmp_path)
    paths = []
    for n, ns in enumerate(times):
        path = tmp_path / "curated" / f"u{n}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text("x", encoding="utf-8")
        try:
            os.utime(path, ns=(ns, ns))
        except (OSError, OverflowError):
            continue
        paths.append(path)
    for path in paths * 2:  # asked twice: the second answer comes from the cache
        assert stamp(path.relative_to(tmp_path).as_posix()) == _exact(path), os.stat(path)


def test_a_file_that_is_gone_takes_its_nearest_folder(tmp_path: Path) -> None:
    folder = tmp_path / "evidence" / "curated" / "glossary"
    folder.mkdir(parents=True)
    os.utime(folder, ns=(1_700_000_000 * SECOND + 999_999_700, 1_700_000_000 * SECOND))
    assert changed_at(tmp_path)("evidence/curated/glossary/gone.md") == _exact(folder)


def test_thtnow_pins_every_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.md").write_text("x", encoding="utf-8")
    stamp = changed_at(tmp_path)
    monkeypatch.setenv("THT_NOW", "2020-02-02T02:02:02Z")
    assert stamp("a.md") == stamp("missing.md") == "2020-02-02T02:02:02Z"
