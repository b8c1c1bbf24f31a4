"""Issue 28, speed: an imported unit is rendered once per refresh. The comparison reuses
the canonical text the import pipeline rendered (and parsed back equal) instead of
rendering every proposed unit a second time under the archive lock. Counted, not timed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from import_helpers import add, comparison, refresh_one
from shop_project import MART_IDS, write_shop

from evidence_tool.sources import compare, import_source
from evidence_tool.unit import Unit, render

REL = "imports/shop"


def test_each_imported_unit_is_rendered_once_by_a_refresh(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[str] = []

    def counting(unit: Unit, *args: Any, **kwargs: Any) -> str:
        rendered.append(unit.id)
        return render(unit, *args, **kwargs)

    monkeypatch.setattr(import_source, "render", counting)
    monkeypatch.setattr(compare, "render", counting)
    write_shop(workspace / REL, staging=False)
    assert add(workspace, "dbt", REL, "--language", "en").exit_code == 0
    assert refresh_one(workspace, "dbt", REL).exit_code == 0
    proposed = comparison(workspace, "dbt", REL)["proposed"]
    assert [p["id"] for p in proposed] == MART_IDS
    assert sorted(rendered) == sorted(MART_IDS), "rendered more than once per unit"
    assert all(p["markdown"] == render(_parsed(p["markdown"])) for p in proposed)


def _parsed(text: str) -> Unit:
    from evidence_tool.unit import parse

    return parse(text)
