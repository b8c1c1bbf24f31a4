"""The import pipeline with importers registered for the test: span verification, invalid
units, the proposal cache, a file changing mid-import, all-or-nothing over several sources."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import tht
from import_helpers import add, comparison, error_of, refresh_one, replace, sid_of, write
from source_helpers import tree_state

from evidence_tool.importers import formats

PLUGIN = '''
from evidence_tool.importers.base import (
    Imported, ImportResult, Span, element_id, make_unit, NotImported,
)
from evidence_tool.unit.model import DomainPayload, GlossaryPayload

RUNS = []


def _unit(name, rule, language):
    return make_unit(
        id=element_id("liar", name), language=language, title=name.title(),
        payload=DomainPayload(rule=rule), purposes=("disambiguation",),
    )


class Liar:
    """Cites honest, altered, out-of-range and foreign spans of notes.txt."""

    format = "liar"
    options = {"mode": str}

    def read(self, source):
        RUNS.append(source.files)
        f = source.file("notes.txt")
        raw = f.read_bytes(source.max_bytes)
        result = ImportResult()
        honest = raw.split(b"\\n")[0]
        text = honest.decode()
        result.units.append(Imported(_unit("honest", text, source.language),
                                     [Span("notes.txt", 0, len(honest), text)]))
        result.units.append(Imported(_unit("altered", "x", source.language),
                                     [Span("notes.txt", 0, len(honest), text.upper())]))
        result.units.append(Imported(_unit("beyond", "y", source.language),
                                     [Span("notes.txt", len(raw) - 2, len(raw) + 40, "zz")]))
        result.units.append(Imported(_unit("foreign", "z", source.language),
                                     [Span("other.txt", 0, 3, "abc")]))
        empty = make_unit(id=element_id("liar", "empty"), language=source.language,
                          title="Empty", payload=GlossaryPayload(definition=""),
                          purposes=("disambiguation",))
        result.units.append(Imported(empty, [Span("notes.txt", 0, len(honest), text)]))
        result.not_imported.append(NotImported("line 2", "a tag", Span("notes.txt",
            len(honest) + 1, len(honest) + 6, raw[len(honest) + 1:len(honest) + 6].decode())))
        return result


class Honest:
    """One unit per nonblank line of every file, each citing its line."""

    format = "honest"
    options = {}

    def read(self, source):
        RUNS.append(source.files)
        result = ImportResult()
        for f in source.files:
            raw = f.read_bytes(source.max_bytes)
            start = 0
            for n, line in enumerate(raw.split(b"\\n"), start=1):
                if line.strip():
                    text = line.decode()
                    result.units.append(Imported(
                        _unit(f"{f.path}-{n}", text, source.language),
                        [Span(f.path, start, start + len(line), text)]))
                start += len(line) + 1
        return result


class Toucher(Honest):
    """Like Honest, but the file is appended to while it is read (another writer)."""

    format = "toucher"

    def read(self, source):
        result = super().read(source)
        with source.files[0].abs_path.open("ab") as handle:
            handle.write(b"appended meanwhile\\n")
        return result
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The test importers as a real module on sys.path, registered as formats."""
    package = tmp_path / "plugins" / "tht_test_importers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "fake.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    for name, cls in (("liar", "Liar"), ("honest", "Honest"), ("toucher", "Toucher")):
        monkeypatch.setitem(formats.FORMATS, name, f"tht_test_importers.fake:{cls}")
    import tht_test_importers.fake as module

    module.RUNS.clear()
    yield module
    sys.modules.pop("tht_test_importers.fake", None)
    sys.modules.pop("tht_test_importers", None)


NOTES = "Fasting glucose is measured after eight hours without food.\n#tag1 #tag2\n"


def test_span_verification_catches_a_lying_importer(workspace: Path, plugin: object) -> None:
    write(workspace, "imports/notes/notes.txt", NOTES)
    assert add(workspace, "liar", "imports/notes").exit_code == 0
    assert refresh_one(workspace, "liar", "imports/notes").exit_code == 0
    comp = comparison(workspace, "liar", "imports/notes")
    items = {(i["code"], i["unit_id"]) for i in comp["review_items"]}
    for name in ("altered", "beyond", "foreign"):
        uid = f"evidence:liar:{name}"
        assert ("span-mismatch", uid) in items, name
        assert ("excerpt-not-found", uid) in items, name  # it cites nothing at all
        proposed = next(p for p in comp["proposed"] if p["id"] == uid)
        assert proposed["excerpts"] == []
    assert ("invalid-unit", "evidence:liar:empty") in items
    assert not any(uid == "evidence:liar:honest" for _, uid in items)
    honest = next(p for p in comp["proposed"] if p["id"] == "evidence:liar:honest")
    assert honest["excerpts"] == [NOTES.split("\n")[0]]
    assert comp["not_imported"] == [
        {"element": "line 2", "what": "a tag", "at": "imports/notes/notes.txt:2-2"}
    ]
    refused = replace(workspace, "liar", "imports/notes")
    assert error_of(refused)["code"] == "E140"
    assert not list((workspace / "evidence/curated/domain").glob("liar-*.md"))


def test_importer_runs_only_for_changed_input(workspace: Path, plugin: object) -> None:
    runs: list[object] = plugin.RUNS  # type: ignore[attr-defined]
    write(workspace, "imports/h/a.txt", "Alpha rule one.\n\nAlpha rule two.\n")
    write(workspace, "imports/h/.hidden/skip.txt", "never read\n")
    assert add(workspace, "honest", "imports/h").exit_code == 0
    assert refresh_one(workspace, "honest", "imports/h").exit_code == 0
    assert len(runs) == 1
    assert [f.path for f in runs[0]] == ["a.txt"]  # hidden folders are not given
    # Pending and unchanged: the cached proposal is reused, the importer does not run.
    assert refresh_one(workspace, "honest", "imports/h").exit_code == 0
    assert len(runs) == 1
    assert replace(workspace, "honest", "imports/h").exit_code == 0
    again = refresh_one(workspace, "honest", "imports/h")
    assert again.json["result"]["sources"][0]["status"] == "unchanged"
    assert len(runs) == 1
    write(workspace, "imports/h/b.txt", "Beta rule.\n")
    changed = refresh_one(workspace, "honest", "imports/h")
    assert changed.json["result"]["sources"][0]["status"] == "compared"
    assert len(runs) == 2
    comp = comparison(workspace, "honest", "imports/h")
    assert [p["id"] for p in comp["proposed"]] == [
        "evidence:liar:a-txt-1",
        "evidence:liar:a-txt-3",
        "evidence:liar:b-txt-1",
    ]


def test_a_file_changed_while_imported_fails_and_records_nothing(
    workspace: Path, plugin: object
) -> None:
    write(workspace, "imports/t/rules.txt", "Gamma rule.\n")
    assert add(workspace, "toucher", "imports/t").exit_code == 0
    before = tree_state(workspace)
    failed = refresh_one(workspace, "toucher", "imports/t")
    error = error_of(failed)
    assert error["code"] == "E501" and "changed while it was being imported" in error["message"]
    after = tree_state(workspace)
    after.pop("imports/t/rules.txt")
    before.pop("imports/t/rules.txt")
    assert after == before


def test_one_failing_import_leaves_sources_json_byte_identical(
    workspace: Path, plugin: object
) -> None:
    write(workspace, "imports/h/a.txt", "Delta rule.\n")
    assert add(workspace, "honest", "imports/h").exit_code == 0
    write(workspace, "imports/v/training.json", '[{"id": "v1-doc", "question": null, ')
    assert add(workspace, "vanna", "imports/v").exit_code == 0
    # A first refresh of everything fails on the broken export: nothing at all recorded.
    assert not (workspace / "evidence/.local/sources.json").exists()
    failed = tht(workspace, "refresh")
    assert error_of(failed)["code"] == "E504"
    assert not (workspace / "evidence/.local/sources.json").exists()
    # With pending comparisons recorded, a failing refresh of all leaves them byte for byte.
    write(workspace, "imports/v/training.json", "[]")
    assert tht(workspace, "refresh").exit_code == 0
    store = workspace / "evidence/.local/sources.json"
    recorded = store.read_bytes()
    before = tree_state(workspace)
    write(workspace, "imports/h/a.txt", "Delta rule, edited.\n")
    write(workspace, "imports/v/training.json", '[{"id": "v1-doc"}, 7]')
    failed = tht(workspace, "refresh")
    error = error_of(failed)
    assert error["code"] == "E504" and error["path"] == "imports/v/training.json"
    assert store.read_bytes() == recorded
    after = tree_state(workspace)
    for changed in ("imports/h/a.txt", "imports/v/training.json"):
        before.pop(changed)
        after.pop(changed)
    assert after == before


def test_a_file_read_whole_over_the_per_file_bound_is_e503_naming_it(
    workspace: Path, plugin: object, tmp_path: Path
) -> None:
    installation = tmp_path / "installation.yaml"
    installation.write_text(
        '{"installation_version": 1, "evidence": {"network": {"max_bytes": 4096}}}'
    )
    write(workspace, "imports/h/big.txt", "A long rule line.\n" * 400)
    assert add(workspace, "honest", "imports/h").exit_code == 0
    failed = tht(
        workspace,
        "refresh",
        "--source-id",
        sid_of("honest", "imports/h"),
        installation=installation,
    )
    error = error_of(failed)
    assert error["code"] == "E503" and error["message"].startswith("imports/h/big.txt is larger")
    assert error["path"] == "imports/h/big.txt"
