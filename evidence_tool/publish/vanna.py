"""Vanna training items as JSON lines: the rows ``vn.get_training_data()`` shows, one per
unit, in the shape this project's Vanna importer reads back (docs/publish.md has the
snippet that feeds them to ``vn.train``).

- an example whose interpretation ends with a fenced ``sql`` block -> ``sql`` row
  (``question``, ``content`` = the SQL);
- every other unit -> ``documentation`` row, ``content`` = its text (``as_text``);
- ``id`` is the unit id, ``revision`` the snapshot's: what a cite-check needs.
"""

from __future__ import annotations

import json

from evidence_tool.publish.model import Published, Snapshot
from evidence_tool.publish.text import as_text, split_sql
from evidence_tool.unit import ExamplePayload

FILE = ""  # one file: --output itself


def _line(row: dict[str, str | None]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True)


def publish(snap: Snapshot) -> Published:
    out = Published()
    lines = []
    for entry in snap.entries:
        unit = entry.unit
        row: dict[str, str | None] = {"id": unit.id, "revision": snap.revision}
        if isinstance(unit.payload, ExamplePayload):
            parts = split_sql(unit.payload.interpretation)
            if parts is None:
                out.skip(
                    unit.id,
                    "an example without a fenced sql block: Vanna pairs a question with SQL",
                )
                continue
            row |= {"training_data_type": "sql", "question": unit.payload.question}
            row["content"] = parts[1]
        else:
            row |= {"training_data_type": "documentation", "question": None}
            row["content"] = as_text(unit)
        lines.append(_line(row))
        out.exported.append(unit.id)
    out.files[FILE] = ("\n".join(lines) + "\n" if lines else "").encode("utf-8")
    return out
