"""A WrenAI v5 project's ``knowledge/`` tree, in the layout this project's WrenAI importer
reads (docs/importers.md, WrenAI's project-layout-v5):

- ``wren_project.yml``: ``schema_version: 5``, the project name, and a comment naming
  the snapshot revision;
- an example -> ``knowledge/sql/<id>.md``: frontmatter ``nl`` (the question), ``sql`` (its
  fenced SQL) and ``source`` (unit id @ revision); the interpretation's notes below;
- a domain rule or a normalization -> ``knowledge/rules/<id>.md``; a formula ->
  ``knowledge/metrics/<id>.md``: one ``# Title`` section each;
- a glossary term or an enum -> ``knowledge/glossary/<id>.md``: ``# Title`` then the text.

Each file is named by its unit id (``evidence:admin:ward`` -> ``admin.ward.md``) and the
SQL pairs carry the revision too.  WrenAI's knowledge has no place for a mapping (a
relationship needs a join condition) or a reference (a link, not text): not exported.
"""

from __future__ import annotations

from evidence_tool.publish.model import Published, Snapshot, stamp
from evidence_tool.publish.text import as_text, id_slug, slug, split_sql
from evidence_tool.unit import ExamplePayload, GlossaryPayload, Unit
from evidence_tool.unit.yaml_emit import dump

SKIPPED = {
    "mapping": "WrenAI relates models by a join condition (relationships.yml); a "
    "mapping names tables and columns without one",
    "reference": "WrenAI's knowledge holds instructions and SQL pairs, not links to documents",
}
# The knowledge folder of each kind written as a ``# Title`` section (examples are SQL pairs).
FOLDERS = {
    "domain": "rules",
    "normalization": "rules",
    "formula": "metrics",
    "glossary": "glossary",
    "enum": "glossary",
}


def _section(unit: Unit, text: str) -> bytes:
    return f"# {unit.title}\n\n{text.strip()}\n".encode()


def _pair(unit: Unit, payload: ExamplePayload, revision: str) -> bytes | None:
    parts = split_sql(payload.interpretation)
    if parts is None:
        return None
    notes, sql = parts
    front = dump({"nl": payload.question, "sql": sql, "source": stamp(unit.id, revision)})
    return f"---\n{front}---\n{notes}\n".encode() if notes else f"---\n{front}---\n".encode()


def publish(snap: Snapshot) -> Published:
    out = Published()
    head = f"# Published by evidence-tool: workspace {snap.workspace}, revision {snap.revision}\n"
    out.files["wren_project.yml"] = (
        head + dump({"schema_version": 5, "name": slug(snap.workspace, "_")})
    ).encode()
    for entry in snap.entries:
        unit, p = entry.unit, entry.unit.payload
        name = f"{id_slug(unit.id)}.md"
        reason = SKIPPED.get(unit.kind)
        if reason is not None:
            out.skip(unit.id, reason)
            continue
        if isinstance(p, ExamplePayload):
            data = _pair(unit, p, snap.revision)
            if data is None:
                out.skip(unit.id, "an example without a fenced sql block: a SQL pair needs SQL")
                continue
            out.files[f"knowledge/sql/{name}"] = data
        else:  # a glossary term is its definition; every other kind its text
            text = p.definition if isinstance(p, GlossaryPayload) else as_text(unit)
            out.files[f"knowledge/{FOLDERS[unit.kind]}/{name}"] = _section(unit, text)
        out.exported.append(unit.id)
    return out
