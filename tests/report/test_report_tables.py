"""The review page shows a Markdown table in a unit's body as a table (issue 34 item 13),
still inert: cell text is escaped and a link in a cell keeps only safe targets."""

from __future__ import annotations

import re
from pathlib import Path

from cli_runner import invoke
from helpers import envelope

RULE = """---
schema_version: 4
id: evidence:shop:discount-bands
kind: domain
language: en
purposes: [sql_generation]
applies_to:
  tables: [sales.orders]
---

# Discount bands by basket size

## Rule

Discounts follow the basket total:

| basket total (EUR) | discount | note |
|---|---:|---|
| under 50 | 0 % | <b>none</b> |
| 50 to 199 | 5 % | [terms](javascript:alert(1)) |
| 200 or more | 10 % | `sales.orders.total >= 200` |

Bands are applied before VAT.
"""


def test_a_table_in_a_unit_body_is_rendered_as_a_table(tmp_path: Path) -> None:
    root = tmp_path / "shop"
    assert (
        invoke(["workspace", "new", str(root), "--id", "shop", "--language", "en"]).exit_code == 0
    )
    (root / "evidence/curated/domain/discount-bands.md").write_text(RULE, encoding="utf-8")
    page = root / "review.html"
    out = envelope(
        invoke(
            [
                "workspace",
                "evidence",
                "report",
                "--html",
                str(page),
                "--workspace-root",
                str(root),
                "--json",
            ]
        )
    )
    assert out["ok"], out
    html = page.read_text(encoding="utf-8")
    card = html[html.index("Discount bands by basket size") :]
    card = card[: card.index("Bands are applied before VAT.")]
    table = re.search(r"<table>.*?</table>", card, re.S)
    assert table is not None, card[:2000]
    body = table.group(0)
    assert body.count("<tr>") == 4 and len(re.findall(r"<th[ >]", body)) == 3, (
        body
    )  # header + three rows
    assert "<td>50 to 199</td>" in body
    assert "<code>sales.orders.total &gt;= 200</code>" in body
    assert "<b>" not in body and "&lt;b&gt;none&lt;/b&gt;" in body  # raw HTML stays text
    assert 'href="javascript' not in body
    assert "| under 50 |" not in card  # not a paragraph of pipes
