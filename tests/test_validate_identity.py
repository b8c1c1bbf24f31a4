"""``tht evidence validate`` given one workspace through several paths (the root and a
link to it, ``ws/../ws``, a folder and a file inside it, a file twice): each file is
validated once, so each finding, error or warning, is reported once and in the order the
workspace alone gives it.  A unit file that is itself a link inside the curated tree is
another entry of the tree and keeps its own findings."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from cli_runner import invoke
from helpers import envelope


@pytest.fixture
def depot(tmp_path: Path) -> Path:
    """A workspace with a warning (W111), an error (E110), a unit saved outside the curated
    tree (W108) and a deliberate link to a unit inside it (its id twice: E120)."""
    root = tmp_path / "depot"
    made = invoke(["workspace", "new", str(root), "--id", "depot", "--language", "en", "--example"])
    assert made.exit_code == 0, made.stderr
    curated = root / "evidence" / "curated"
    glossary = curated / "glossary" / "customer.md"
    text = glossary.read_text(encoding="utf-8")
    glossary.write_text(text.replace("## Synonyms", "## Synonims"), encoding="utf-8")
    formula = curated / "formula" / "average-order-value.md"
    body = formula.read_text(encoding="utf-8")
    formula.write_text(body.replace("\n# ", "\n## ", 1), encoding="utf-8")  # no title
    os.symlink("customer.md", curated / "glossary" / "patron.md")
    (root / "evidence" / "stray-rate.md").write_text(
        (curated / "domain" / "cancelled-orders.md")
        .read_text(encoding="utf-8")
        .replace("evidence:example:cancelled-orders", "evidence:depot:stray-rate"),
        encoding="utf-8",
    )
    os.symlink(root, tmp_path / "alias")
    return root


def _findings(paths: list[str]) -> tuple[int, list[tuple[str, str, int | None]]]:
    out = envelope(invoke(["evidence", "validate", *paths, "--json"]))
    found = [
        (str(d["code"]), Path(str(d["path"])).name, d.get("line"))  # type: ignore[misc]
        for d in [*out["errors"], *out["warnings"]]  # type: ignore[misc]
    ]
    return int(out["result"]["files"]), found  # type: ignore[index,call-overload]


def test_one_workspace_through_two_paths_reports_each_finding_once(
    depot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(depot.parent)
    files, alone = _findings(["depot"])
    assert files == 9, files  # 8 example units and the link
    codes = Counter(code for code, _, _ in alone)
    assert codes == {"W111": 2, "E110": 1, "E120": 1, "W108": 1}, alone  # link: W111 again
    spellings = [
        ["depot", "alias"],
        ["alias", "depot"],
        [str(depot), "depot/../depot"],
        ["depot/evidence/curated/glossary", "depot/evidence/curated/glossary/customer.md"],
        ["depot/evidence/curated/glossary/customer.md", "alias/evidence/curated/glossary"],
        ["depot", "alias/evidence/curated", "depot/evidence/curated/formula"],
    ]
    for paths in spellings[:2]:
        assert _findings(paths) == (files, alone), paths
    assert _findings(spellings[2]) == (files, alone)
    in_glossary = _findings(["depot/evidence/curated/glossary"])
    assert in_glossary[0] == 2 and len(in_glossary[1]) == 3, in_glossary  # W111 x2, E120
    for paths in spellings[3:5]:
        assert _findings(paths) == in_glossary, paths
    assert _findings(spellings[5]) == (files, alone)


def test_a_file_given_twice_is_read_once(depot: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(depot / "evidence" / "curated")
    once = _findings(["glossary/customer.md"])
    assert once == (1, [("W111", "customer.md", 18)]), once
    for paths in (
        ["glossary/customer.md", "glossary/customer.md"],
        ["glossary/customer.md", "../../../alias/evidence/curated/glossary/customer.md"],
        [
            "glossary/customer.md",
            "./glossary/../glossary/customer.md",
            str(depot.parent / "alias/evidence/curated/glossary/customer.md"),
        ],
    ):
        assert _findings(paths) == once, paths
    # The link is its own entry: given with its target, both are read.
    both = _findings(["glossary/customer.md", "glossary/patron.md"])
    assert both[0] == 2 and [c for c, _, _ in both[1]] == ["E120", "W111", "W111"], both


def test_dot_dot_after_a_folder_link_is_the_folder_the_link_leads_to(
    depot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``glossary/lnk/../customer.md`` with ``lnk`` a link to ``formula/sub`` is
    ``formula/customer.md`` to the file system, another file than ``glossary/customer.md``:
    both are read (their ids differ), neither hides the other (``abspath`` made them one)."""
    curated = depot / "evidence" / "curated"
    text = (curated / "glossary" / "customer.md").read_text(encoding="utf-8")
    other = text.replace("evidence:example:customer", "evidence:example:client")
    assert other != text
    (curated / "formula" / "sub").mkdir()
    (curated / "formula" / "customer.md").write_text(other, encoding="utf-8")
    os.symlink("../formula/sub", curated / "glossary" / "lnk")
    monkeypatch.chdir(curated)
    one = _findings(["glossary/customer.md"])
    other_one = _findings(["glossary/lnk/../customer.md"])
    assert one[0] == other_one[0] == 1, (one, other_one)
    both = _findings(["glossary/customer.md", "glossary/lnk/../customer.md"])
    assert both[0] == 2, both
    assert Counter(both[1]) == Counter(one[1] + other_one[1]), (both, one, other_one)


def test_an_entry_under_a_folder_link_in_the_tree_is_reported_whatever_the_order(
    depot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``glossary/sub`` links to ``../formula``: the workspace's validate reads
    ``glossary/sub/average-order-value.md`` as its own entry (E108, its id twice: E120).
    Giving ``formula`` (or a file in it) before the workspace must not hide that entry."""
    curated = depot / "evidence" / "curated"
    os.symlink("../formula", curated / "glossary" / "sub")
    os.symlink(curated / "formula", depot.parent / "outside")
    monkeypatch.chdir(depot.parent)
    alone = _findings(["depot"])
    under_link = [f for f in alone[1] if f[0] in ("E108", "E120")]
    assert len(under_link) == 3, alone  # E108 and E120 for the entry, E120 of the patron link
    formula = "depot/evidence/curated/formula"
    orders = [
        ["depot", formula],
        [formula, "depot"],
        [f"{formula}/average-order-value.md", "depot"],
        ["alias/evidence/curated/formula", "depot"],
        [formula, "alias"],
        ["outside/average-order-value.md", "depot"],  # a link to the folder, from outside
        ["depot", "outside"],
    ]
    for paths in orders:  # under the spelling that took each file first: another order
        files, found = _findings(paths)
        assert (files, Counter(found)) == (alone[0], Counter(alone[1])), paths
    assert len(orders) == 7
