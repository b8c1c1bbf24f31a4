"""One rule for long lists in text output (issue 34 item 10): ``status`` and
``consolidate`` show the first 20 ids of a class, then "… and N more (--json lists
all)"; ``--json`` lists every id."""

from __future__ import annotations

import re
from pathlib import Path

from cli_runner import invoke
from helpers import envelope

from evidence_tool.cli.reporters.text_lines import LIST_LIMIT

COUNT = 47  # well over the limit, and not a round number


def _glossary(uid: str) -> str:
    return (
        f"---\nschema_version: 4\nid: evidence:bulk:{uid}\nkind: glossary\nlanguage: it\n"
        f"purposes: [disambiguation]\n---\n\n# Termine {uid}\n\n## Definizione\n\n"
        f"Il termine {uid}.\n"
    )


def _add_terms(root: Path, prefix: str) -> list[str]:
    folder = root / "evidence/curated/glossary"
    ids = []
    for n in range(COUNT):
        name = f"{prefix}-{n:02d}"
        (folder / f"{name}.md").write_text(_glossary(name), encoding="utf-8")
        ids.append(f"evidence:bulk:{name}")
    return ids


def _cut(text: str, label: str) -> str:
    [line] = [line for line in text.splitlines() if label in line]
    return line


def test_status_and_consolidate_cut_a_long_id_list_the_same_way(tmp_path: Path) -> None:
    root = tmp_path / "bulk"
    assert (
        invoke(["workspace", "new", str(root), "--id", "bulk", "--language", "it"]).exit_code == 0
    )
    ws = ["--workspace-root", str(root)]
    assert invoke(["workspace", "evidence", "init", *ws]).exit_code == 0
    added = _add_terms(root, "voce")

    status = invoke(["workspace", "evidence", "status", *ws])
    line = _cut(status.stdout, "unconsolidated added")
    more = COUNT - LIST_LIMIT
    assert line.endswith(f"… and {more} more (--json lists all)"), line
    assert len(re.findall(r"evidence:bulk:", line)) == LIST_LIMIT, line
    assert len(status.stdout) < 4000  # not every id: the text stays readable
    listed = envelope(invoke(["workspace", "evidence", "status", *ws, "--json"]))
    assert listed["result"]["unconsolidated"]["added"] == sorted(added)  # type: ignore[index]

    done = invoke(["workspace", "evidence", "consolidate", *ws])
    assert done.exit_code == 0, done.stderr
    line = _cut(done.stdout, "added (")
    assert line.endswith(f"… and {more} more (--json lists all)"), line
    assert len(re.findall(r"evidence:bulk:", line)) == LIST_LIMIT
