"""The review page's catalog section, rendered from the typed ``CatalogPanel`` read from
the catalog run's record (issue 18): the HTML is the one the record-dict page wrote, but for
the drift statement, which names its snapshot since issue 28."""

from __future__ import annotations

from dataclasses import dataclass, field

from evidence_tool.archive.state import State
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.report.collect import CatalogPanel, DriftRow
from evidence_tool.report.page import catalog_section

RECORD: JsonObject = {
    "format": 1,
    "checked_at": "2026-03-04T05:06:07Z",
    "catalog": {"kind": "postgres", "relations": 2, "fingerprint": "f00d"},
    "base": "9" * 40,
    "note": "a <b> note",
    "drift": {
        "changes": [
            {
                "change": "column_type_changed",
                "relation": "public.orders",
                "column": "qty",
                "old": "int",
                "new": "bigint",
                "units": ["evidence:q"],
            },
            {
                "change": "relation_renamed",
                "relation": "public.u",
                "column": None,
                "renamed_to": "public.v",
                "units": [],
            },
        ]
    },
}
EXPECTED = (
    '<section class="part" id="catalog"><h2>Warehouse catalog</h2><dl class="meta">'
    "<dt>checked at</dt><dd>2026-03-04T05:06:07Z</dd><dt>catalog</dt><dd>postgres, 2 relation(s)"
    "</dd><dt>fingerprint</dt><dd><code>f00d</code></dd><dt>compared with</dt><dd><code>"
    + "9" * 40
    + '</code></dd></dl><p class="note">a &lt;b&gt; note</p><h3>Drift since snapshot <code>'
    + "9" * 12
    + "</code></h3><table><thead><tr><th>change</th><th>relation</th><th>column</th><th>type</th>"
    "<th>units touched</th></tr></thead><tbody><tr><td>column type changed</td><td><code>"
    "public.orders</code></td><td><code>qty</code></td><td>int → bigint</td><td>"
    '<a href="#unit-evidence:q"><code>evidence:q</code></a></td></tr><tr><td>relation renamed'
    "</td><td><code>public.u</code></td><td>—</td><td> renamed to <code>public.v</code></td>"
    "<td>—</td></tr></tbody></table></section>"
)


@dataclass
class _Data:
    catalog: CatalogPanel | None
    state: State = field(default_factory=State)


def test_catalog_section_renders_the_typed_panel_as_before() -> None:
    panel = CatalogPanel.of(RECORD)
    assert panel is not None and panel.drift is not None and len(panel.drift) == 2
    assert panel.drift[1] == DriftRow(
        "relation_renamed", "public.u", None, None, None, "public.v", ()
    )
    assert catalog_section(_Data(panel)) == EXPECTED  # type: ignore[arg-type]


def test_no_run_and_broken_parts_read_as_the_page_showed_them() -> None:
    assert CatalogPanel.of({}) is None
    assert "No catalog check yet" in catalog_section(_Data(None))  # type: ignore[arg-type]
    broken = CatalogPanel.of({"checked_at": "t", "catalog": "x", "drift": {"changes": []}})
    assert broken is not None and broken.kind == "None" and broken.drift == ()
    shown = catalog_section(_Data(broken))  # type: ignore[arg-type]
    assert "No drift since the snapshot it was compared with" in shown
    assert CatalogPanel.of({"checked_at": "t", "drift": None}).drift is None  # type: ignore[union-attr]


def test_the_drift_statement_names_its_revision_and_says_when_the_active_was_never_checked() -> (
    None
):
    """Issue 28: a decide made a new active snapshot after the last catalog run; the page
    said "No drift" about it although it was never checked."""
    quiet = {**RECORD, "drift": {"changes": []}, "note": None}
    panel = CatalogPanel.of(quiet)
    checked = "9" * 40
    same = catalog_section(_Data(panel, State(None, checked)))  # type: ignore[arg-type]
    assert f"No drift since snapshot <code>{checked[:12]}</code>" in same
    newer = "a" * 40
    page = catalog_section(_Data(panel, State(None, newer)))  # type: ignore[arg-type]
    assert "No drift: the warehouse" not in page
    assert f"active snapshot <code>{newer[:12]}</code> was never checked" in page
    assert f"snapshot <code>{checked[:12]}</code>" in page
    drifted = catalog_section(_Data(CatalogPanel.of(RECORD), State(None, newer)))  # type: ignore[arg-type]
    assert f"Drift since snapshot <code>{checked[:12]}</code>" in drifted
    assert "never checked" in drifted
