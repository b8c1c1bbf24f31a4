"""Issue 27: ids of imported names in any Unicode form and script.  One name typed
composed (NFC) or decomposed (NFD, as macOS file names are) is one id; names written
wholly outside ASCII no longer all become ``x``: each gets ``x-`` and a hash of its NFC
form (docs/importers.md, "Ids")."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from wren_cortex_fixtures import CORTEX_MODEL, run, write_tree

from evidence_tool.importers.base import element_id, slug

NAMES = ["Città di Zürich", "Ärzte-Übersicht", "São Tomé façade", "Ώmega ratio 2"]


@pytest.mark.parametrize("name", NAMES)
def test_composed_and_decomposed_forms_give_one_id(name: str) -> None:
    nfc, nfd = unicodedata.normalize("NFC", name), unicodedata.normalize("NFD", name)
    assert nfc != nfd  # the case really has two forms
    assert element_id("t", nfc) == element_id("t", nfd)


def test_names_wholly_in_other_scripts_get_distinct_stable_ids() -> None:
    names = ["売上", "利益", "Выручка", "Прибыль", "المبيعات", "מכירות", "販売数量"]
    ids = [element_id("t", n) for n in names]
    assert len(set(ids)) == len(names)
    assert all(i.startswith("evidence:t:x-") for i in ids)
    assert ids == [element_id("t", n) for n in names]  # deterministic
    # NFC there too: a decomposed Hangul name is the composed one
    assert slug(unicodedata.normalize("NFD", "매출")) == slug("매출")


def test_ascii_names_keep_their_ids() -> None:
    assert slug("Bed stays 2024") == "bed-stays-2024"
    assert slug("snake_case") == "snake_case"
    assert slug("  ") == "x"


def test_an_import_of_non_latin_names_gives_one_unit_each(tmp_path: Path) -> None:
    model = CORTEX_MODEL.replace("name: channel\n", "name: 販売チャネル\n").replace(
        "name: product_name\n", "name: 商品名\n"
    )
    assert model != CORTEX_MODEL
    result = run("cortex", write_tree(tmp_path / "c", {"model.yaml": model}))
    ids = [item.unit.id for item in result.units]
    assert len(ids) == len(set(ids))
    assert sum(":x-" in i or ".x-" in i for i in ids) >= 2, ids
