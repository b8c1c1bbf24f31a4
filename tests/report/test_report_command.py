"""``tht workspace evidence report``: where the page goes, and what it says (no browser)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import webbrowser
from pathlib import Path

import pytest
from report_helpers import (
    LAB,
    copy_fixture,
    decide,
    ok,
    pending_workspace,
    record,
    rich_workspace,
    tht,
)

from evidence_tool.errors import CODES


def test_the_page_goes_to_the_git_ignored_cache_by_default(tmp_path: Path) -> None:
    ws = pending_workspace(tmp_path / "ws")
    result = tht(ws, "report")
    data = ok(result)
    assert data["path"] == str(ws / ".evidence-cache/report.html")
    assert (ws / ".evidence-cache/.gitignore").read_text().splitlines()[-1] == "*"
    assert data["units"] == 48 and data["file_errors"] == 0 and not data["opened"]
    assert {c["revision"] for c in data["comparisons"]} == {
        r["comparison"]["revision"]
        for r in json.loads((ws / "evidence/.local/sources.json").read_text())["sources"].values()
    }
    assert result.stderr == ""
    text = tht(ws, "report").stdout  # --json: one object, nothing else
    assert json.loads(text)["command"] == "workspace evidence report"


@pytest.mark.parametrize("where", ["outside", "evidence", "folder"])
def test_a_file_outside_the_workspace_or_in_the_managed_tree_is_refused(
    tmp_path: Path, where: str
) -> None:
    ws = copy_fixture(tmp_path / "ws")
    target = {
        "outside": tmp_path / "report.html",
        "evidence": ws / "evidence/report.html",
        "folder": ws / "evidence-review",
    }[where]
    if where == "folder":
        target.mkdir()
    result = tht(ws, "report", "--html", str(target))
    assert result.exit_code == 2, result.stdout
    assert result.json["errors"][0]["code"] == "E901"
    assert not (tmp_path / "report.html").exists() and not (ws / "evidence/report.html").exists()
    assert not (ws / ".evidence-cache").exists()


def test_a_symlinked_folder_leaving_the_workspace_is_refused(tmp_path: Path) -> None:
    ws = copy_fixture(tmp_path / "ws")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", ws / "out")
    result = tht(ws, "report", "--html", str(ws / "out/page.html"))
    assert result.exit_code == 2
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_html_file_inside_the_workspace_and_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = copy_fixture(tmp_path / "ws")
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    data = ok(tht(ws, "report", "--html", str(ws / "review/page.html"), "--open"))
    assert data["path"] == str(ws / "review/page.html") and data["opened"]
    assert opened == [(ws / "review/page.html").as_uri()]
    assert (ws / "review/page.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    # --html without FILE keeps the default, also before another option.
    assert ok(tht(ws, "report", "--html", "--open"))["path"].endswith(".evidence-cache/report.html")


def test_before_initialization_the_page_shows_the_working_files(tmp_path: Path) -> None:
    ws = copy_fixture(tmp_path / "ws")
    shutil.rmtree(ws / "evidence/.local")
    (ws / "evidence/local-manifest.yaml").unlink()
    data = ok(tht(ws, "report"))
    html = Path(data["path"]).read_text(encoding="utf-8")
    assert not data["initialized"] and data["units"] == 48
    assert "The archive is not initialized" in html and "No snapshot yet" in html
    assert not (ws / "evidence/.local").exists()  # the report records nothing


def test_a_missing_curated_tree_is_an_availability_error(tmp_path: Path) -> None:
    ws = copy_fixture(tmp_path / "ws")
    shutil.rmtree(ws / "evidence/curated")
    result = tht(ws, "report")
    assert result.exit_code == 6 and result.json["errors"][0]["code"] == "E601"


def test_file_errors_changes_and_revisions(tmp_path: Path) -> None:
    ws = rich_workspace(tmp_path / "ws")
    html = Path(ok(tht(ws, "report"))["path"]).read_text(encoding="utf-8")
    # File errors: file, line, code and the fix from CODES.
    assert "<code>evidence/curated/glossary/broken.md</code></td><td>7:1</td>" in html
    assert "<code>E104</code>" in html and CODES["E104"].fix in html
    assert CODES["E113"].fix.replace("'", "&#x27;") in html
    # Changes against the active revision, with a word diff of the modification.
    state = (ws / "evidence/.local/state.yaml").read_text()
    active = next(line.split(": ")[1] for line in state.splitlines() if line.startswith("active"))
    assert f"Working files against the active revision <code>{active}</code>" in html
    assert "night shift <ins>or a weekend </ins>" in html
    assert "Deleted (1)" in html and "evidence:admin:patient-merge" in html
    assert "Invalid files (1)" in html
    # The comparison names what replace retires and what each side says.
    assert "Replace would retire" not in html  # one of three: no mass retirement
    comparison = record(ws, LAB)["comparison"]
    assert comparison["retire"] == ["evidence:lab:turnaround-minutes"]
    assert f'data-revision="{comparison["revision"]}"' in html


def test_retraction_warnings_reach_the_registry_and_the_citing_units(tmp_path: Path) -> None:
    ws = rich_workspace(tmp_path / "ws")
    sid = record(ws, LAB)["source_id"]
    ok(tht(ws, "sources", "retract", sid, "--note", "withdrawn by the lab <b>now</b>"))
    html = Path(ok(tht(ws, "report"))["path"]).read_text(encoding="utf-8")
    warning = "was retracted on"
    assert html.count(warning) >= 1 + 3  # the registry and each of the three lab units
    assert "withdrawn by the lab &lt;b&gt;now&lt;/b&gt;" in html and "<b>now" not in html
    assert 'data-status="unchanged review"' in html  # the retraction raised review items


def test_decide_commands_name_the_installation_quoted(tmp_path: Path) -> None:
    ws = pending_workspace(tmp_path / "ws")
    folder = tmp_path / "it's an installation"
    folder.mkdir()
    installation = folder / "inst.yaml"
    installation.write_text('{"installation_version": 1, "actor": "operator"}\n')
    data = ok(tht(ws, "report", installation=installation))
    html = Path(data["path"]).read_text(encoding="utf-8")
    lab = record(ws, LAB)
    expected = shlex.join(
        [
            "tht",
            "--installation",
            str(installation),
            "workspace",
            "evidence",
            "decide",
            "--workspace-root",
            str(ws),
            "--source-id",
            lab["source_id"],
            "--revision",
            lab["comparison"]["revision"],
            "--decision",
            "keep",
        ]
    )
    from html import escape

    assert escape(expected) in html


def test_git_commands_inside_a_checkout_and_a_note_outside(tmp_path: Path) -> None:
    ws = copy_fixture(tmp_path / "repo" / "my ws")
    outside = Path(ok(tht(ws, "report"))["path"]).read_text(encoding="utf-8")
    assert "Outside Git:" in outside and "not inside a Git worktree" in outside
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True, env=env)
    inside = Path(ok(tht(ws, "report"))["path"]).read_text(encoding="utf-8")
    top = shlex.quote(str(tmp_path / "repo"))
    assert f"git -C {top} add --all -- &#x27;my ws/evidence&#x27;" in inside
    assert "commit -m" in inside and "push" in inside


def test_a_cache_folder_linking_outside_is_not_followed(tmp_path: Path) -> None:
    ws = copy_fixture(tmp_path / "ws")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", ws / ".evidence-cache")
    # A managed folder leading outside: the whole workspace is refused (SPEC.md 11).
    for extra in ((), ("--html", str(ws / "page.html"))):
        result = tht(ws, "report", *extra)
        assert result.exit_code == 1 and result.json["errors"][0]["code"] == "E108"
        assert result.json["errors"][0]["path"] == ".evidence-cache"
    assert list((tmp_path / "elsewhere").iterdir()) == []
    assert not (ws / "page.html").exists()


def test_dropped_and_suppressed_ids_are_named(tmp_path: Path) -> None:
    ws = pending_workspace(tmp_path / "ws")
    lab = record(ws, LAB)
    ok(decide(ws, LAB, "replace"))
    (ws / "evidence/curated/formula/lab-turnaround-minutes.md").unlink()  # a curated deletion
    ok(tht(ws, "consolidate"))
    handbook = ws / "evidence/source/lab-handbook.md"
    fresh = (ws / "evidence/curated/domain/lab-hemolysed-specimens.md").read_text()
    fresh = fresh.replace("lab:hemolysed-specimens", "lab:icteric-specimens")
    handbook.write_text(handbook.read_text().replace("falsely high", "too high") + "\n" + fresh)
    ok(tht(ws, "refresh"))
    html = Path(ok(tht(ws, "report"))["path"]).read_text(encoding="utf-8")
    article = html[html.index(f'data-source-id="{lab["source_id"]}"') :]
    article = article[: article.index("</article>")]
    assert "yes: the source had a curated deletion" in article
    assert "<code>evidence:lab:turnaround-minutes</code>: reserved by a deletion record" in article
    assert (
        "<code>evidence:lab:icteric-specimens</code>: suppressed: the source had a curated deletion"
        in article
    )
    assert '<span class="badge changed">changed</span><code>evidence:lab:hemolysed' in article
