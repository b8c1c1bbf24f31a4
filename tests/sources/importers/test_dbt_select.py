"""Issue 28: choosing what a dbt import reads, in dbt's own node-selection idiom.

``select`` and ``exclude`` take what ``dbt ls --select`` takes for models: a name, a
``*`` glob, a folder of the model's fqn (``staging``), ``path:`` and ``tag:``; spaces
(or a YAML list) are a union, a comma an intersection. A model left out is counted under
``skipped``, never dropped silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dbt_helpers import MANIFEST, read
from shop_project import write_shop

from evidence_tool.errors import DescriptorError
from evidence_tool.importers.base import ImportResult


def _models(result: ImportResult) -> set[str]:
    """The models that gave a glossary unit (each described model gives its own)."""
    ids = {i.unit.id.split(":", 2)[2] for i in result.units if i.unit.kind == "glossary"}
    return {uid.split(".", 1)[0] for uid in ids}


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = write_shop(tmp_path / "dbt")
    # A tagged staging model with a description, so selection shows in the units.
    path = root / "models/staging/schema.yml"
    path.write_text(
        path.read_text(encoding="utf-8")
        + "\n  - name: stg_ovens\n    description: One row per oven and day\n"
        "    config:\n      tags: ['nightly', 'ovens']\n",
        encoding="utf-8",
    )
    return root


@pytest.mark.parametrize(
    ("options", "models", "skipped"),
    [
        ({}, {"patrons", "baskets", "stg_ovens"}, 0),
        ({"exclude": "staging"}, {"patrons", "baskets"}, 4),
        ({"exclude": "stg_*"}, {"patrons", "baskets"}, 4),
        ({"exclude": "path:models/staging"}, {"patrons", "baskets"}, 4),
        ({"select": "tag:nightly"}, {"stg_ovens"}, 5),
        ({"select": "patrons tag:ovens"}, {"patrons", "stg_ovens"}, 4),
        ({"select": ["baskets", "stg_ovens"]}, {"baskets", "stg_ovens"}, 4),
        ({"select": "staging,tag:nightly"}, {"stg_ovens"}, 5),
        ({"select": "*", "exclude": "path:models/marts/schema.yml"}, {"stg_ovens"}, 2),
    ],
)
def test_select_and_exclude_choose_the_models(
    shop: Path, options: dict[str, object], models: set[str], skipped: int
) -> None:
    result = read(shop, options=options)
    assert _models(result) == models
    assert result.skipped.get("model not selected", 0) == skipped
    # Tests of models left out are not listed as not imported either: they were not read.
    if "staging" in str(options.get("exclude", "")):
        assert not [n for n in result.not_imported if "stg_" in n.element]


@pytest.mark.parametrize(
    "bad",
    ["+patrons", "patrons+", "@baskets", "config.materialized:view", "", ["ok", 3]],
)
def test_selectors_dbt_has_but_this_import_does_not_are_e902(shop: Path, bad: object) -> None:
    with pytest.raises(DescriptorError) as caught:
        read(shop, options={"select": bad})
    assert "options.select" in str(caught.value)


@pytest.mark.parametrize(
    ("options", "models"),
    [
        ({"select": "tag:nightly"}, {"bed_stays"}),
        ({"exclude": "path:models/bed_stays.sql"}, {"care_units"}),
        ({"select": "bed_planning", "exclude": "care_*"}, {"bed_stays"}),
    ],
)
def test_a_manifest_is_selected_by_its_nodes_fqn_path_and_tags(
    options: dict[str, object], models: set[str]
) -> None:
    everything = _models(read(MANIFEST)) & {"bed_stays", "care_units"}
    assert everything == {"bed_stays", "care_units"}
    result = read(MANIFEST, options=options)
    assert _models(result) & everything == models
    assert result.skipped["model not selected"] == 1
