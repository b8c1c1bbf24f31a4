"""The terminal tests' session fixture (the workspaces: pty_workspaces.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pty_workspaces import Templates, build


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int], Templates]:
    """``templates(n)``: the n-unit templates, built on first use."""
    built: dict[int, Templates] = {}

    def get(units: int) -> Templates:
        if units not in built:
            built[units] = build(tmp_path_factory.mktemp(f"pty-{units}"), units)
        return built[units]

    return get
