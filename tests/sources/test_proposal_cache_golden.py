"""The refiner's proposal cache keeps its bytes: an entry written by the code before the
typed cache record (main at issue 32, hand-written dicts) is read back as a hit, and the
same proposal is saved to the same bytes.  A refresh after an upgrade must not refine
again what it already paid for.  The golden entry was written by that code:
``PYTHONPATH=<main checkout> python tests/sources/test_proposal_cache_golden.py``."""

from __future__ import annotations

import sys
from pathlib import Path

from evidence_tool.record import UNSET
from evidence_tool.sources import proposals
from evidence_tool.sources.records import NotImportedItem, ReviewItem
from evidence_tool.sources.refiner import Proposal, ProposedUnit
from evidence_tool.unit import parse_unit
from evidence_tool.workspace.layout import Layout

GOLDEN = Path(__file__).with_name("golden") / "proposal_cache.json"
KEY = "5e" * 32
UNIT = """\
---
schema_version: 4
id: evidence:test:posto-letto
kind: glossary
language: it
purposes: [disambiguation, schema_linking]
applies_to:
  concepts: [posto letto]
---

# Posto letto

## Definizione

Un letto «disponibile» in reparto: `occupato` o libero.
"""


def _proposal() -> Proposal:
    unit = parse_unit(UNIT).unit
    assert unit is not None
    return Proposal(
        # one unit rendered on save, one that holds its canonical text (an import's)
        [ProposedUnit(unit, ["Un letto", "é"]), ProposedUnit(unit, [], UNIT)],
        [ReviewItem("meaning-missing", "no meaning\n", "evidence:test:x"), ReviewItem("c", "m")],
        record="# Import record\n\n```text\nx\n```\n",
        not_imported=[
            NotImportedItem("dbt model a", "tags", "models/a.yml:3"),
            NotImportedItem("dbt model b", "values", None, "meaning-missing", "evidence:b", None),
            NotImportedItem("dbt model c", "filter", "c.yml:9", "not-representable", UNSET, "fix"),
        ],
        skipped={"ddl": 3, "another": 1},
    )


def _written(root: Path) -> bytes:
    layout = Layout.at(root)
    proposals.save(layout, KEY, _proposal())
    return (layout.cache / proposals.FOLDER / f"{KEY}.json").read_bytes()


def test_a_cache_entry_keeps_its_bytes_and_an_old_one_is_a_hit(tmp_path: Path) -> None:
    golden = GOLDEN.read_bytes()
    assert _written(tmp_path / "new") == golden
    old = tmp_path / "old"
    folder = Layout.at(old).cache / proposals.FOLDER
    folder.mkdir(parents=True)
    (folder / f"{KEY}.json").write_bytes(golden)
    loaded, want = proposals.load(Layout.at(old), KEY), _proposal()
    assert loaded is not None, "an entry written before the typed record is refined again"
    units = [(u.unit, u.excerpts) for u in want.units]
    assert [(u.unit, u.excerpts) for u in loaded.units] == units
    assert loaded.review_items == want.review_items and loaded.record == want.record
    assert loaded.not_imported == want.not_imported and loaded.skipped == want.skipped


if __name__ == "__main__":  # writes the golden entry with the code on PYTHONPATH
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        GOLDEN.write_bytes(_written(Path(scratch)))
    sys.exit(0)
