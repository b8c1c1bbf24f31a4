"""``tht workspace evidence publish`` (issue 33): deterministic bytes, a dry run that
writes nothing and says what would change, the output-path rule of ``export``, every
entry carrying its unit id and the revision, ``not_exported`` in JSON and text."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from helpers import envelope
from publish_helpers import fixture_workspace, tht

from evidence_tool.publish import FORMATS

OUTPUT = {
    "cortex": "model.yaml",
    "vanna": "training.jsonl",
    "jsonl": "corpus.jsonl",
    "wrenai": "wren",
    "dbt": "dbt",
}


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``root``: its sha256 and mtime (a dry run may change neither)."""
    found = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            p = Path(dirpath, name)
            found[str(p.relative_to(root))] = (
                hashlib.sha256(p.read_bytes()).hexdigest(),
                p.stat().st_mtime_ns,
            )
    return found


def _files(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {"": path.read_bytes()}
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def _publish(ws: Path, fmt: str, out: Path, *more: str) -> dict:  # type: ignore[type-arg]
    result = tht(ws, "publish", "--format", fmt, "--output", str(out), *more)
    assert result.exit_code == 0, result.stdout + result.stderr
    return envelope(result)["result"]  # type: ignore[no-any-return]  # schema-checked


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return fixture_workspace(tmp_path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_same_snapshot_same_bytes(ws: Path, fmt: str) -> None:
    first = _publish(ws, fmt, ws / "a" / OUTPUT[fmt])
    second = _publish(ws, fmt, ws / "b" / OUTPUT[fmt])
    a, b = _files(ws / "a" / OUTPUT[fmt]), _files(ws / "b" / OUTPUT[fmt])
    assert a and a == b
    assert first["not_exported"] == second["not_exported"]
    again = _publish(ws, fmt, ws / "a" / OUTPUT[fmt])  # over its own output: nothing to do
    assert again["files"]["added"] == again["files"]["changed"] == []
    assert again["files"]["unchanged"] == len(a)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_entry_carries_its_unit_id_and_the_revision(ws: Path, fmt: str) -> None:
    result = _publish(ws, fmt, ws / "out" / OUTPUT[fmt])
    files = _files(ws / "out" / OUTPUT[fmt])
    text = "\n".join(f"{name}\n{data.decode()}" for name, data in files.items())
    assert result["revision"] in text
    skipped = {n["unit_id"] for n in result["not_exported"]}
    exported = [line for line in (ws / "evidence").rglob("*.md") if "curated" in line.parts]
    ids = set()
    for path in exported:
        head = path.read_text("utf-8").split("\nid: ", 1)[1].split("\n", 1)[0]
        ids.add(head)
    assert len(ids) == 48 and result["units"] == 48 - len(skipped)
    for uid in sorted(ids - skipped):
        # WrenAI's rule and glossary files are named by the id (their text stays the unit's).
        shown = uid.removeprefix("evidence:").replace(":", ".")
        assert uid in text or shown in text, uid


def test_dry_run_writes_nothing_and_lists_the_changes(ws: Path) -> None:
    out = ws / "pub" / "wren"
    before = _tree(ws)
    dry = _publish(ws, "wrenai", out, "--dry-run")
    assert dry["dry_run"] is True and _tree(ws) == before
    assert len(dry["files"]["added"]) == 37 and dry["files"]["changed"] == []
    real = _publish(ws, "wrenai", out)
    assert real["files"] == dry["files"]  # one plan: the dry run said what the run did
    # A rule edited and a glossary term deleted, then consolidated: the next dry run
    # names the one changed and the one removed file, and still writes nothing.
    rule = ws / "evidence/curated/domain/patient-merge.md"
    rule.write_text(rule.read_text("utf-8").replace("## Rule\n\n", "## Rule\n\nFirst. "), "utf-8")
    (ws / "evidence/curated/glossary/ward.md").unlink()
    done = tht(ws, "consolidate")
    assert done.exit_code == 0, done.stdout
    before = _tree(ws)
    dry = _publish(ws, "wrenai", out, "--dry-run")
    assert _tree(ws) == before
    assert dry["files"]["changed"] == ["pub/wren/knowledge/rules/admin.patient-merge.md"]
    assert dry["files"]["removed"] == ["pub/wren/knowledge/glossary/admin.ward.md"]
    # The six SQL pairs and the project file name the new revision only; the rule and
    # glossary files (named by their unit id) are unchanged.
    assert dry["files"]["added"] == [] and dry["files"]["restamped"] == 6 + 1
    assert dry["files"]["unchanged"] == 37 - 1 - 1 - 7
    _publish(ws, "wrenai", out)
    assert not (out / "knowledge/glossary/admin.ward.md").exists()
    assert "First. " in (out / "knowledge/rules/admin.patient-merge.md").read_text("utf-8")


def test_dry_run_of_a_jsonl_format_lists_entries_by_unit_id(ws: Path) -> None:
    out = ws / "vanna.jsonl"
    _publish(ws, "vanna", out)
    (ws / "evidence/curated/glossary/ward.md").unlink()
    assert tht(ws, "consolidate").exit_code == 0
    dry = _publish(ws, "vanna", out, "--dry-run")
    assert dry["files"]["changed"] == ["vanna.jsonl"]
    assert dry["entries"] == {
        "added": [],
        "changed": [],
        "removed": ["evidence:admin:ward"],
        "restamped": 47,
        "unchanged": 0,
    }


def test_jsonl_is_the_export(ws: Path) -> None:
    exported = tht(ws, "export", "--output", str(ws / "export.jsonl"))
    assert exported.exit_code == 0, exported.stdout
    _publish(ws, "jsonl", ws / "publish.jsonl")
    assert (ws / "publish.jsonl").read_bytes() == (ws / "export.jsonl").read_bytes()


def test_the_output_path_rule_of_export(ws: Path) -> None:
    for target in ("evidence/curated/x.yaml", "workspace.yaml", "../outside.yaml"):
        refused = tht(ws, "publish", "--format", "cortex", "--output", str(ws / target))
        assert refused.exit_code == 2 and refused.json["errors"][0]["code"] == "E901", target
    mine = ws / "notes" / "model.yaml"
    mine.parent.mkdir()
    mine.write_text("an operator's file\n", "utf-8")
    refused = tht(ws, "publish", "--format", "cortex", "--output", str(mine))
    assert refused.json["errors"][0]["code"] == "E901"
    assert "--force" in refused.json["errors"][0]["message"]
    assert mine.read_text("utf-8") == "an operator's file\n"
    _publish(ws, "cortex", mine, "--force")
    assert mine.read_bytes().startswith(b"# Cortex Analyst semantic model")
    # A tree format never removes a file it did not write.
    (ws / "wren" / "knowledge").mkdir(parents=True)
    (ws / "wren" / "knowledge" / "theirs.md").write_text("# Theirs\n\nkept\n", "utf-8")
    _publish(ws, "wrenai", ws / "wren")
    assert (ws / "wren" / "knowledge" / "theirs.md").exists()


def test_not_exported_in_json_and_text(ws: Path) -> None:
    result = _publish(ws, "dbt", ws / "dbt")
    skipped = result["not_exported"]
    assert {"unit_id": "evidence:admin:patient-merge", "reason": skipped[1]["reason"]} in skipped
    assert all(set(n) == {"unit_id", "reason"} and n["reason"] for n in skipped)
    from cli_runner import invoke

    text = invoke(
        [
            "workspace",
            "evidence",
            "publish",
            "--format",
            "dbt",
            "--output",
            str(ws / "dbt"),
            "--workspace-root",
            str(ws),
        ]
    )
    assert text.exit_code == 0, text.stderr
    assert f"not exported ({len(skipped)}):" in text.stdout
    assert "evidence:admin:patient-merge: dbt model properties" in text.stdout


def test_nothing_active_is_e905(tmp_path: Path) -> None:
    from cli_runner import invoke

    root = tmp_path / "new"
    assert invoke(["workspace", "new", str(root), "--id", "w", "--language", "en"]).exit_code == 0
    result = tht(root, "publish", "--format", "vanna", "--output", str(root / "v.jsonl"))
    assert result.exit_code == 2 and result.json["errors"][0]["code"] == "E905"
    assert not (root / "v.jsonl").exists()


def test_the_cli_offers_every_format() -> None:
    from evidence_tool.cli.publish_cmds import FORMATS as OFFERED

    assert tuple(OFFERED) == FORMATS


@pytest.mark.parametrize("fmt", ["cortex", "wrenai"])
def test_attack_hostile_output_paths_are_refused_and_nothing_is_written(ws: Path, fmt: str) -> None:
    """The rule holds for a folder format file by file: a link inside the workspace that
    leads onto evidence/ or .git/, a climb out, a nested repository's internals."""
    (ws / ".git").mkdir()
    (ws / "link-to-evidence").symlink_to(ws / "evidence", target_is_directory=True)
    (ws / "link-to-git").symlink_to(ws / ".git", target_is_directory=True)
    (ws / "nested" / ".GIT").mkdir(parents=True)
    name = OUTPUT[fmt]
    hostile = [
        ws / "link-to-evidence" / name,
        ws / "link-to-git" / name,
        ws / "nested" / ".GIT" / name,
        ws / "sub" / ".." / ".." / name,
        ws / "evidence" / "curated" / name,
    ]
    before = _tree(ws)
    for target in hostile:
        result = tht(ws, "publish", "--format", fmt, "--output", str(target), "--force")
        assert result.exit_code == 2, (target, result.stdout)
        assert result.json["errors"][0]["code"] == "E901", target
    assert _tree(ws) == before
    assert len(hostile) == 5


def test_same_bytes_across_processes_whatever_the_hash_seed(ws: Path) -> None:
    """No set or dict order leaks into the output: two processes with different hash
    seeds write the same Cortex model and dbt patch."""
    import subprocess
    import sys

    tht_bin = Path(sys.executable).with_name("tht")
    outputs = []
    for seed in ("1", "4242"):
        env = {k: v for k, v in os.environ.items() if k != "THT_INSTALLATION"}
        env["PYTHONHASHSEED"] = seed
        for fmt, name in (("cortex", "model.yaml"), ("dbt", "dbt")):
            args = ["workspace", "evidence", "publish", "--format", fmt]
            target = ws / f"seed-{seed}" / name
            done = subprocess.run(
                [str(tht_bin), *args, "--output", str(target)],
                cwd=ws, env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
        outputs.append(
            {**_files(ws / f"seed-{seed}" / "model.yaml"), **_files(ws / f"seed-{seed}" / "dbt")}
        )
    assert len(outputs[0]) == 3 and outputs[0] == outputs[1]


def test_a_folder_format_refuses_a_file_and_a_file_format_a_folder(ws: Path) -> None:
    (ws / "a-file").write_text("x\n", "utf-8")
    (ws / "a-folder").mkdir()
    for fmt, target in (("wrenai", "a-file"), ("cortex", "a-folder")):
        result = tht(ws, "publish", "--format", fmt, "--output", str(ws / target))
        assert result.exit_code == 2 and result.json["errors"][0]["code"] == "E901", fmt
    assert (ws / "a-file").read_text("utf-8") == "x\n" and not any((ws / "a-folder").iterdir())


def test_a_cortex_model_without_any_table_is_refused(tmp_path: Path) -> None:
    from cli_runner import invoke

    root = tmp_path / "rules-only"
    assert invoke(["workspace", "new", str(root), "--id", "r", "--language", "en"]).exit_code == 0
    rule = root / "evidence/curated/domain/one.md"
    rule.parent.mkdir(parents=True, exist_ok=True)
    rule.write_text(
        "---\nschema_version: 4\nid: evidence:r:one\nkind: domain\nlanguage: en\n"
        "purposes: [sql_generation]\n---\n\n# One rule\n\n## Rule\n\nCount only valid rows.\n",
        "utf-8",
    )
    for step in ("init", "consolidate"):
        assert tht(root, step).exit_code == 0
    refused = tht(root, "publish", "--format", "cortex", "--output", str(root / "m.yaml"))
    assert refused.exit_code == 2 and "at least one table" in refused.json["errors"][0]["message"]
    assert not (root / "m.yaml").exists()
    # The other formats have a place for a rule.
    assert _publish(root, "vanna", root / "v.jsonl")["units"] == 1
