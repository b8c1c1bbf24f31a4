"""Every acquisition or refinement failure exits 5 and records nothing (SPEC 6.3)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from source_helpers import (
    LAB,
    WARD,
    DocServer,
    decide,
    installation,
    record,
    refresh,
    source_line,
    tree_state,
    use_remote_sources,
)

REPO = Path(__file__).resolve().parents[2]

REFINERS = {
    "exit1": "import sys\nsys.stdin.read()\nprint('refiner crashed', file=sys.stderr)\nsys.exit(1)\n",
    "timeout": "import sys, time\nsys.stdin.read()\ntime.sleep(30)\n",
    "invalid-json": "import sys\nsys.stdin.read()\nprint('{not json')\n",
    "schema-invalid": "import sys, json\nsys.stdin.read()\nprint(json.dumps({'units': 'x'}))\n",
}


def _refiner(tmp_path: Path, name: str, body: str) -> Path:
    script = tmp_path / f"refiner-{name}.py"
    script.write_text(body)
    return installation(
        tmp_path,
        refiner={"kind": "command", "command": [sys.executable, str(script)], "timeout_s": 1},
    )


def _prepared(ws: Path) -> dict[str, str]:
    """A workspace with earlier comparisons and one adopted source, then a changed draft."""
    assert refresh(ws).exit_code == 0
    assert decide(ws, LAB, "replace").exit_code == 0
    assert refresh(ws).exit_code == 0
    draft = ws / "evidence/source/lab-handbook.md"
    draft.write_text(draft.read_text().replace("60\nminutes", "30\nminutes"))
    return tree_state(ws)


@pytest.mark.parametrize("name", sorted(REFINERS))
def test_refiner_failure_records_nothing(workspace: Path, tmp_path: Path, name: str) -> None:
    before = _prepared(workspace)
    inst = _refiner(tmp_path, name, REFINERS[name])
    result = refresh(workspace, installation=inst)
    assert result.exit_code == 5, result.stdout
    assert result.json["errors"][0]["code"] == "E502"
    assert tree_state(workspace) == before


def test_example_refiner_program_matches_the_builtin(workspace: Path, tmp_path: Path) -> None:
    builtin = refresh(workspace, "--dry-run")
    inst = installation(
        tmp_path,
        refiner={
            "kind": "command",
            "command": [sys.executable, str(REPO / "examples/refiner_units.py")],
        },
    )
    external = refresh(workspace, installation=inst)
    assert external.exit_code == 0, external.stdout
    for locator in (LAB, WARD):
        assert (
            source_line(external, locator)["proposed"] == source_line(builtin, locator)["proposed"]
        )
        assert source_line(external, locator)["review_items"] == 0


def test_excerpt_not_in_source_is_a_review_item(workspace: Path, tmp_path: Path) -> None:
    body = (
        "import sys, json\nreq = json.load(sys.stdin)\n"
        "unit = '---\\nschema_version: 4\\nid: evidence:x:y\\nkind: domain\\nlanguage: en\\n"
        "purposes: [sql_generation]\\n---\\n\\n# Y\\n\\n## Rule\\n\\nInvented.\\n'\n"
        "print(json.dumps({'units': [{'markdown': unit, 'excerpts': ['Invented.']}]}))\n"
    )
    result = refresh(workspace, installation=_refiner(tmp_path, "invent", body))
    assert result.exit_code == 0
    items = record(workspace, WARD)["comparison"]["review_items"]
    assert items[0]["code"] == "excerpt-not-found" and items[0]["unit_id"] == "evidence:x:y"
    refused = decide(workspace, WARD, "replace")
    assert refused.exit_code == 1 and refused.json["errors"][0]["code"] == "E140"


ROUTES = {
    "http-500": ("/fail", "E501"),
    "redirect-not-allowed": ("/redirect-away", "E501"),
    "over-max-bytes": ("/big", "E503"),
    "slow-drip": ("/drip", "E501"),
    "endless-stream": ("/endless", "E503"),
    "gzip-bomb": ("/bomb", "E503"),
}


@pytest.mark.parametrize("case", sorted(ROUTES))
def test_http_failure_records_nothing(
    workspace: Path, http_server: DocServer, net_installation: Callable[..., Path], case: str
) -> None:
    inst = net_installation()
    use_remote_sources(workspace, [{"kind": "http", "url": http_server.base + "/doc.md"}])
    assert refresh(workspace, installation=inst).exit_code == 0
    before = tree_state(workspace)
    route, code = ROUTES[case]
    use_remote_sources(
        workspace,
        [
            {"kind": "http", "url": http_server.base + "/doc.md"},
            {"kind": "http", "url": http_server.base + route},
        ],
    )
    before["workspace.yaml"] = tree_state(workspace)["workspace.yaml"]
    result = refresh(workspace, installation=inst)
    assert result.exit_code == 5, result.stdout
    assert result.json["errors"][0]["code"] == code
    assert tree_state(workspace) == before
    assert not any("forbidden" in r["path"] for r in http_server.requests)


def test_redirect_within_allowed_hosts_is_followed(
    workspace: Path, http_server: DocServer, net_installation: Callable[..., Path]
) -> None:
    use_remote_sources(workspace, [{"kind": "http", "url": http_server.base + "/redirect-local"}])
    result = refresh(workspace, installation=net_installation())
    assert result.exit_code == 0, result.stdout
    rec = next(r for r in result.json["result"]["sources"] if r["kind"] == "http")
    assert rec["proposed"] == ["evidence:remote:discharge"]


def test_https_to_http_redirect_is_refused() -> None:
    from evidence_tool.errors import SourceError
    from evidence_tool.sources.policy import NetworkPolicy
    from evidence_tool.sources.remote import _check_hop

    policy = NetworkPolicy(allowed_hosts=("docs.example.org",))
    _check_hop("https://docs.example.org/a.md", None, policy, "https://docs.example.org/a.md")
    with pytest.raises(SourceError, match="https to http"):
        hop = "http://docs.example.org/a.md"
        _check_hop(hop, "https://docs.example.org/b.md", policy, hop)


def test_no_installation_means_no_remote_access(workspace: Path, http_server: DocServer) -> None:
    use_remote_sources(workspace, [{"kind": "http", "url": http_server.base + "/doc.md"}])
    before = tree_state(workspace)
    result = refresh(workspace)
    assert result.exit_code == 5 and "allowed_hosts" in result.json["errors"][0]["message"]
    assert http_server.requests == []
    assert tree_state(workspace) == before


def test_symlink_leaving_the_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# secret\n")
    (workspace / "evidence/incoming/link.md").symlink_to(outside)
    before = tree_state(workspace)
    result = refresh(workspace)
    assert result.exit_code == 5 and result.json["errors"][0]["code"] == "E501"
    assert tree_state(workspace) == before


def test_more_than_200_documents_is_refused(workspace: Path) -> None:
    for n in range(201):
        (workspace / f"evidence/incoming/doc-{n:03}.md").write_text(f"# doc {n}\n")
    before = tree_state(workspace)
    result = refresh(workspace)
    assert result.exit_code == 5 and result.json["errors"][0]["code"] == "E503"
    assert tree_state(workspace) == before
