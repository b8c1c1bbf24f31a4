"""Issue 28: when two dbt columns share a description text, ``show`` names the place of the
element that cited it, not both places (the excerpt's text alone cannot tell them apart)."""

from __future__ import annotations

from pathlib import Path

from cli_runner import tht
from import_helpers import import_and_replace
from shop_project import document_column, write_shop

REL = "imports/shop"
SAME = "Free text typed at the counter"


def _line(ws: Path, model: str) -> int:
    lines = (ws / REL / "models/marts/schema.yml").read_text(encoding="utf-8").splitlines()
    start = lines.index(f"  - name: {model}")
    return next(i + 1 for i, line in enumerate(lines) if i > start and SAME in line)


def test_a_shared_description_is_imported_from_its_own_place(workspace: Path) -> None:
    write_shop(workspace / REL, staging=False)
    document_column(workspace / REL, "patrons", "remark", SAME)
    document_column(workspace / REL, "baskets", "remark", SAME)
    import_and_replace(workspace, "dbt", REL, "--language", "en")
    schema = f"{REL}/models/marts/schema.yml"
    for model in ("patrons", "baskets"):
        shown = tht(workspace, "show", f"evidence:dbt:{model}.remark").json["result"]
        line = _line(workspace, model)
        assert shown["imported_from"] == [f"{schema}:{line}-{line}"], (model, shown)
