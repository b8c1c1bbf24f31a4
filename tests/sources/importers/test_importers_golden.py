"""Every importer's whole result, byte for byte, on realistic fixtures: the rendered units,
every span (path, offsets, text), the review items, what was not imported and what was
skipped, against the golden file printed by the code before issue 32 folded the span
readers (commit 7a79c1a).  ``THT_REGEN_GOLDEN=1`` writes a new one under the test's
temporary folder, to copy over only from code whose output is known good."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import bird_fixture
import pytest
from dbt_helpers import MANIFEST, PROJECT, source_of
from wren_cortex_fixtures import CORTEX_MODEL, WREN_PROJECT, write_tree

from evidence_tool.importers.base import ImportResult, Span
from evidence_tool.importers.formats import importer_for
from evidence_tool.unit.render import render

GOLDEN = Path(__file__).with_name("golden") / "importers.json"

# Vanna in the three shapes pandas writes: records (slashes escaped), JSON Lines, to_csv()
# with its index column, CRLF and a multi-line quoted cell; a BOM on the CSV.
_ROWS = [
    {
        "id": "v1-sql",
        "question": "Stays per ward?",
        "content": "SELECT ward, count(*)\nFROM adm GROUP BY ward",
        "training_data_type": "sql",
    },
    {
        "id": "v2-doc",
        "question": None,
        "content": "## Ward\nThe discharge ward (è) closes the stay.",
        "training_data_type": "documentation",
        "extra": 1,
    },
    {
        "id": "v3-ddl",
        "question": None,
        "content": "CREATE TABLE t (a int)",
        "training_data_type": "ddl",
    },
    {"id": "v4-x", "question": "q", "content": "c", "training_data_type": "plot"},
    {"id": "v5-sql", "question": "", "content": "SELECT 1", "training_data_type": "sql"},
]
VANNA: dict[str, str | bytes] = {
    "t.json": json.dumps(_ROWS, separators=(",", ":"), ensure_ascii=False).replace("/", "\\/"),
    "t.jsonl": "\n".join(json.dumps(r, ensure_ascii=False) for r in _ROWS) + "\r\n\r\n",
    "t.csv": "\ufeff,id,question,content,training_data_type\r\n"
    "0,c1-sql,Average stay?,\"SELECT avg(los)\r\nFROM adm\r\nWHERE w = 'C'\",sql\r\n"
    '1,c2-doc,,"Stay counts nights, ""not"" days.",documentation\r\n'
    "\r\n"
    "2,c3-ddl,,CREATE TABLE t (a int),ddl\r\n",
}


def _span(span: Span | None) -> Any:
    return None if span is None else [span.path, span.start, span.end, span.text]


def _plain(result: ImportResult) -> dict[str, Any]:
    return {
        "units": [[render(i.unit), [_span(s) for s in i.spans]] for i in result.units],
        "review": [list(r) for r in result.review_items],
        "not_imported": [[n.element, n.what, _span(n.span)] for n in result.not_imported],
        "skipped": result.skipped,
        "item_spans": {k: _span(v) for k, v in sorted(result.item_spans.items())},
    }


def _cases(tmp: Path) -> dict[str, tuple[str, Path]]:
    bird = bird_fixture.write(tmp / "bird")
    return {
        "dbt project": ("dbt", PROJECT),
        "dbt manifest": ("dbt", MANIFEST),
        "bird": ("bird", bird),
        "wrenai": ("wrenai", write_tree(tmp / "wren", dict(WREN_PROJECT))),
        "cortex": ("cortex", write_tree(tmp / "cortex", {"model.yaml": CORTEX_MODEL})),
        "vanna": ("vanna", write_tree(tmp / "vanna", VANNA)),
    }


def test_every_importer_writes_what_the_golden_file_holds(tmp_path: Path) -> None:
    got = {
        name: _plain(importer_for(fmt).read(source_of(root)))
        for name, (fmt, root) in _cases(tmp_path).items()
    }
    if os.environ.get("THT_REGEN_GOLDEN"):  # written under the test's folder: copy it over
        out = tmp_path / GOLDEN.name
        out.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", "utf-8")
        pytest.skip(f"golden written to {out}")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert list(got) == list(want)
    for name in want:
        assert want[name]["units"], name  # every format gave units: the check can fail
        assert got[name] == want[name], name
