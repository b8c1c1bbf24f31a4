"""Text output is written for people: every result the JSON has, as aligned key/value lines.

For ``show``, ``verify`` and ``verify --index`` every key of the ``--json`` result (nested
ones included) appears in the text as a ``key:`` label, every scalar value appears, and
nothing is a Python repr: no ``{``, ``[``, ``'`` or ``None`` (issue 15, output people read).
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from archive_helpers import SOURCE_ID, UNIT, UNIT_PATH, edit_visibly

LABEL = re.compile(r"^\s*([A-Za-z_][\w ]*):(?:\s|$)")
DELETED = "evidence:clinical:drg"
DELETED_PATH = "evidence/curated/glossary/drg.md"


def _leaves(value: Any, key: str = "") -> list[tuple[str, Any]]:
    """(key, scalar) pairs of a JSON value, nested dicts and lists included."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _leaves(v, k)]
    if isinstance(value, list):
        return [pair for v in value for pair in _leaves(v, key)]
    return [(key, value)]


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def assert_readable(text: str, result: dict[str, Any], verbatim: str = "") -> int:
    """Every key and scalar of ``result`` is in ``text``, and nothing is a repr.

    ``verbatim`` (a unit's own text, which may hold brackets) is printed as is and is
    left out of the repr check.  Returns how many keys were checked.
    """
    if verbatim:
        assert verbatim.rstrip("\n") in text
        text = text.replace(verbatim.rstrip("\n"), "")
    labels = {m.group(1) for line in text.splitlines() if (m := LABEL.match(line))}
    keys = _keys(result)
    missing = keys - labels
    assert not missing, f"keys without a label in the text: {sorted(missing)}\n{text}"
    for key, value in _leaves(result):
        if key == "text" or value is None or isinstance(value, bool):
            continue
        assert str(value) in text, f"{key}={value!r} is not in the text\n{text}"
    for mark in ("{", "}", "[", "]", "'", "None"):
        assert mark not in text, f"{mark!r} in the text output:\n{text}"
    return len(keys)


def test_show_prints_every_result_key_as_aligned_lines(documented: Path, tht) -> None:
    edit_visibly(documented / UNIT_PATH)  # a manual declaration with document lineage
    assert tht("consolidate", "--actor", "bob", root=documented).exit_code == 0
    result = tht("show", UNIT, root=documented).json["result"]
    assert result["provenance"]["original"]["source_id"] == SOURCE_ID

    text = tht("show", UNIT, root=documented, as_json=False)

    assert text.exit_code == 0
    checked = assert_readable(text.stdout, result, verbatim=result["text"])
    assert checked >= 15  # the unit's keys, provenance's and its original's
    lines = text.stdout.replace(result["text"].rstrip("\n"), "").splitlines()
    # Aligned: the values of one block start in one column.
    top = [line for line in lines if LABEL.match(line) and not line.startswith(" ")]
    columns = {len(line) - len(line.split(":", 1)[1].lstrip()) for line in top if ": " in line}
    assert len(columns) == 1, top


def test_show_of_a_deleted_unit_says_when_by_whom_and_how_to_restore(
    consolidated: Path, tht
) -> None:
    (consolidated / DELETED_PATH).unlink()
    assert tht("consolidate", "--actor", "carol", root=consolidated).exit_code == 0
    result = tht("show", DELETED, root=consolidated).json["result"]
    record = result["deleted"]

    text = tht("show", DELETED, root=consolidated, as_json=False)

    assert text.exit_code == 0
    first = text.stdout.splitlines()[0]
    assert f"deleted at {record['deleted_at']} by carol" in first, first
    assert f"restore with: tht workspace evidence restore {DELETED}" in first, first
    assert "path: None" not in text.stdout
    assert_readable(text.stdout, result, verbatim=result["text"])


def test_verify_prints_the_counts_as_lines(consolidated: Path, tht) -> None:
    result = tht("verify", root=consolidated).json["result"]
    text = tht("verify", root=consolidated, as_json=False)
    assert text.exit_code == 0
    assert assert_readable(text.stdout, result) == len(result) + len(result["checked"])
    assert text.stdout.rstrip().endswith("ok")


def test_verify_index_prints_the_index_result(consolidated: Path, tht) -> None:
    assert tht("consolidate", root=consolidated).json["result"]["status"] == "reindexed"
    result = tht("verify", "--index", root=consolidated).json["result"]
    assert result["index"]["checked"] is True and result["index"]["held"] == 48

    text = tht("verify", "--index", root=consolidated, as_json=False)

    assert text.exit_code == 0
    assert assert_readable(text.stdout, result) > len(result) + len(result["index"])
    assert re.search(r"^\s+held:\s+48$", text.stdout, re.M), text.stdout


def test_verify_index_text_names_the_drift(consolidated: Path, tht) -> None:
    assert tht("consolidate", root=consolidated).exit_code == 0
    with sqlite3.connect(consolidated / ".evidence-cache/index.sqlite") as con:
        con.execute("DELETE FROM units WHERE id = ?", (UNIT,))
    result = tht("verify", "--index", root=consolidated).json["result"]

    text = tht("verify", "--index", root=consolidated, as_json=False)

    assert text.exit_code == 7
    report = [line for line in text.stdout.splitlines() if "E702" not in line]
    assert_readable("\n".join(report), result)
    assert re.search(r"^\s+drift:\s+1$", text.stdout, re.M), text.stdout
    assert "E702" in text.stdout and "verify: FAILED (1 problem)" in text.stdout.splitlines()


def test_verify_index_text_says_when_the_backend_keeps_no_index(
    consolidated: Path, tht, tmp_path: Path
) -> None:
    inst = tmp_path / "none.yaml"
    inst.write_text(
        "installation_version: 1\nevidence:\n  activation:\n    kind: none\n", encoding="utf-8"
    )
    shutil.rmtree(consolidated / ".evidence-cache", ignore_errors=True)
    result = tht("verify", "--index", root=consolidated, installation=inst).json["result"]
    text = tht("verify", "--index", root=consolidated, installation=inst, as_json=False)
    assert text.exit_code == 0
    assert_readable(text.stdout, result)
    assert re.search(r"^\s+checked:\s+no$", text.stdout, re.M), text.stdout
