"""Issue 2, part 6: content_hash is what a unit says, file_hash is what is on disk."""

from __future__ import annotations

import hashlib
import json

import pytest
from unit_helpers import front

from evidence_tool.unit import canonical_json, content_hash, file_hash, parse, render

CANONICAL = (
    "---\n"
    "schema_version: 4\n"
    "id: evidence:test:x\n"
    "kind: glossary\n"
    "language: it\n"
    "purposes: [disambiguation, rewriting]\n"
    "applies_to:\n"
    "  concepts: [ricovero]\n"
    "  tables: [clinical.admissions]\n"
    "---\n"
    "\n"
    "# Ricovero\n"
    "\n"
    "## Definizione\n"
    "\n"
    "Una degenza ospedaliera.\n"
    "\n"
    "## Sinonimi\n"
    "\n"
    "- degenza\n"
    '- "  spazi  "\n'
)

REFORMATTED = (
    "---\r\n"
    "language: it   # Italian headings\r\n"
    "kind: 'glossary'\r\n"
    "applies_to:\r\n"
    "  tables:\r\n"
    "    - clinical.admissions\r\n"
    '  concepts: ["ricovero"]\r\n'
    "id: evidence:test:x\r\n"
    "purposes:\r\n"
    "  - disambiguation\r\n"
    "  - rewriting\r\n"
    "schema_version: 4\r\n"
    "---\r\n"
    "Ricovero\r\n"
    "========\r\n"
    "\r\n"
    "\r\n"
    "## Sinonimi\r\n"
    "- degenza\r\n"
    '- "  spazi  "\r\n'
    "\r\n"
    "## Definizione\r\n"
    "\r\n"
    "\r\n"
    "Una degenza ospedaliera.\r\n"
    "\r\n"
    "\r\n"
)


def test_the_canonical_text_is_what_render_writes() -> None:
    assert render(parse(CANONICAL)) == CANONICAL


def test_reformatting_keeps_the_content_hash_and_changes_the_file_hash() -> None:
    canonical, reformatted = parse(CANONICAL), parse(REFORMATTED.encode())

    assert reformatted == canonical
    assert render(reformatted) == CANONICAL
    assert reformatted.content_hash == canonical.content_hash == content_hash(canonical)
    assert file_hash(REFORMATTED.encode()) != file_hash(CANONICAL.encode())


def test_file_hash_is_the_sha256_of_the_bytes() -> None:
    data = CANONICAL.encode()
    assert file_hash(data) == hashlib.sha256(data).hexdigest()


def test_content_hash_is_the_sha256_of_the_canonical_json() -> None:
    unit = parse(CANONICAL)
    expected = {
        "metadata": {
            "schema_version": 4,
            "id": "evidence:test:x",
            "kind": "glossary",
            "language": "it",
            "purposes": ["disambiguation", "rewriting"],
            "applies_to": {"concepts": ["ricovero"], "tables": ["clinical.admissions"]},
        },
        "title": "Ricovero",
        "payload": {
            "definition": "Una degenza ospedaliera.",
            "synonyms": ["degenza", "  spazi  "],
            "variants": [],
        },
    }
    assert unit.to_json() == expected
    encoded = json.dumps(expected, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(unit.to_json()) == encoded.encode()
    assert unit.content_hash == hashlib.sha256(encoded.encode()).hexdigest()


@pytest.mark.parametrize(
    "old, new",
    [
        ("# Ricovero", "# Ricoveri"),
        ("Una degenza ospedaliera.", "Una degenza ospedaliera!"),
        ("Una degenza ospedaliera.", "Una degenza  ospedaliera."),
        ("- degenza", "- degenze"),
        ('- "  spazi  "', '- "spazi"'),
        ("- degenza\n", "- degenza\n- ricovero\n"),
        ("id: evidence:test:x", "id: evidence:test:y"),
        ("language: it", "language: it-CH"),
        ("purposes: [disambiguation, rewriting]", "purposes: [rewriting, disambiguation]"),
        ("purposes: [disambiguation, rewriting]", "purposes: [disambiguation]"),
        ("  concepts: [ricovero]\n", ""),
        ("  tables: [clinical.admissions]", "  tables: [clinical.admission]"),
    ],
    ids=[
        "title",
        "punctuation in a text field",
        "a blank inside a text field",
        "a list value",
        "blanks inside a JSON-string value",
        "an added list value",
        "id",
        "language",
        "purposes order",
        "a purpose removed",
        "applies_to concepts removed",
        "applies_to table renamed",
    ],
)
def test_any_visible_change_changes_the_content_hash(old: str, new: str) -> None:
    assert old in CANONICAL
    changed = parse(CANONICAL.replace(old, new))
    assert changed.content_hash != parse(CANONICAL).content_hash


def test_swapping_synonyms_and_variants_is_a_visible_change() -> None:
    as_variants = CANONICAL.replace("## Sinonimi", "## Varianti")
    assert parse(as_variants).content_hash != parse(CANONICAL).content_hash


def test_the_order_of_enum_values_is_part_of_the_content() -> None:
    body = '# T\n\n## Column\n\ns.t.c\n\n## Values\n\n### "a"\n\n### "b"\n'
    swapped = body.replace('"a"', '"tmp"').replace('"b"', '"a"').replace('"tmp"', '"b"')
    one = parse(front(kind="enum") + "\n" + body)
    two = parse(front(kind="enum") + "\n" + swapped)
    assert one.content_hash != two.content_hash
