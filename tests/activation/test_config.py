"""Descriptors reject misspelt keys by path (E902, exit 2); ``config show`` redacts secrets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from activation_helpers import Tht, write_installation
from helpers import codes

from evidence_tool.workspace.redact import REDACTED, clean_url, redact

SECRET = "s3cr3t"

INSTALLATIONS = {
    "evidence.activation.kindd": "evidence:\n  activation:\n    kindd: sqlite\n",
    "evidence.network.alowed_hosts": "evidence:\n  network:\n    alowed_hosts: [a.example]\n",
    "evidence.activation.colection": (
        "evidence:\n  activation:\n    kind: qdrant\n    colection: psd\n"
    ),
}


@pytest.mark.parametrize("key_path", sorted(INSTALLATIONS))
@pytest.mark.parametrize(
    "command",
    [
        ("config", "show"),
        ("workspace", "evidence", "consolidate"),
        ("workspace", "evidence", "search"),
    ],
    ids=" ".join,
)
def test_a_misspelt_installation_key_fails_with_its_path(
    workspace: Path, tht: Tht, tmp_path: Path, key_path: str, command: tuple[str, ...]
) -> None:
    inst = tmp_path / "installation.yaml"
    inst.write_text("installation_version: 1\n" + INSTALLATIONS[key_path])
    before = (workspace / "evidence" / ".local" / "state.yaml").read_bytes()
    args = ("degenza",) if command[-1] == "search" else ()
    result = tht(*args, installation=inst, group=command)
    assert result.exit_code == 2 and codes(result.json) == ["E902"]
    assert key_path in result.json["errors"][0]["message"]
    assert result.json["result"] == {"key_path": key_path}
    text = tht(*args, installation=inst, group=command, as_json=False)
    assert text.exit_code == 2 and key_path in text.stderr and "did you mean" in text.stderr
    assert (workspace / "evidence" / ".local" / "state.yaml").read_bytes() == before


WORKSPACE_TYPO = """descriptor_version: 4
id: psd-clinical
name: PSD clinical
default_language: it
evidence:
  descriptor_version: 2
  sources:
    - kind: s3
      bucekt: psd-docs
"""


@pytest.mark.parametrize(
    "command",
    [
        ("config", "show"),
        ("workspace", "evidence", "consolidate"),
        ("workspace", "evidence", "export"),
    ],
    ids=" ".join,
)
def test_a_misspelt_workspace_key_fails_as_an_invalid_descriptor(
    workspace: Path, tht: Tht, command: tuple[str, ...]
) -> None:
    (workspace / "workspace.yaml").write_text(WORKSPACE_TYPO)
    result = tht(group=command)
    assert result.exit_code == 2 and codes(result.json) == ["E902"]
    assert "evidence.sources.0" in result.json["errors"][0]["message"]
    assert not (workspace / ".evidence-cache").exists()  # nothing was activated


def test_a_misspelt_workspace_key_is_named_by_its_path(workspace: Path, tht: Tht) -> None:
    (workspace / "workspace.yaml").write_text(WORKSPACE_TYPO)
    result = tht(group=("config", "show"))
    assert "evidence.sources.0.bucekt" in result.json["errors"][0]["message"]


# -- config show ---------------------------------------------------------------------------


def _secret_installation(path: Path, url: str) -> Path:
    path.write_text(
        "# installation descriptor\n"
        "installation_version: 1\n"
        "actor: operator\n"
        "evidence:\n"
        "  activation:\n"
        "    kind: qdrant\n"
        f"    url: {json.dumps(url)}\n"
        "    api_key_env: QDRANT_API_KEY\n"
        "    collection: psd\n"
        "  refiner:\n"
        "    kind: command\n"
        f"    command: [/opt/refine, --api-key={SECRET}, --token, {SECRET}, --verbose]\n"
        "  network:\n"
        "    allowed_hosts: [docs.example.org]\n"
    )
    return path


@pytest.mark.parametrize(
    "url",
    [
        f"https://user:{SECRET}@qdrant.example:6333/?token={SECRET}&region=eu",
        f"https://qdrant.example:6333/collections?X-Api-Key={SECRET}&api_key={SECRET}",
        # Not a valid URL (an unescaped '/' in the password): the parser's own error
        # message would quote the "port" it cannot read, i.e. the secret.
        f"https://user:{SECRET}/x@qdrant.example:6333",
    ],
    ids=["userinfo-and-token", "key-params", "malformed"],
)
def test_config_show_prints_effective_settings_without_secrets(
    workspace: Path, tht: Tht, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("QDRANT_API_KEY", SECRET)
    inst = _secret_installation(tmp_path / "installation.yaml", url)
    for as_json in (True, False):
        result = tht(installation=inst, group=("config", "show"), as_json=as_json)
        assert result.exit_code == 0, result.stderr
        assert SECRET not in result.stdout and SECRET not in result.stderr
    shown = tht(installation=inst, group=("config", "show")).json["result"]
    assert shown["installation"] == str(inst) and shown["actor"] == "operator"
    assert shown["workspace_root"] == str(workspace)
    activation = shown["activation"]
    assert activation["kind"] == "qdrant" and activation["collection"] == "psd"
    assert activation["api_key_env"] == "QDRANT_API_KEY"  # a variable's name, not a secret
    assert "qdrant.example" in activation["url"] or activation["url"] == REDACTED
    assert shown["refiner"]["command"] == [
        "/opt/refine",
        f"--api-key={REDACTED}",
        "--token",
        REDACTED,
        "--verbose",
    ]
    # Effective: the defaults fill what the installation leaves out.
    assert shown["network"] == {
        "allowed_hosts": ["docs.example.org"],
        "timeout_s": 30,
        "max_bytes": 10485760,
    }
    assert activation["timeout_s"] == 30 and "path" not in activation
    assert shown["workspace"]["id"] == "psd-clinical"


def test_config_show_with_built_in_defaults(workspace: Path, tht: Tht, tmp_path: Path) -> None:
    shown = tht(group=("config", "show")).json["result"]
    assert shown["installation"] is None and shown["actor"] == "alice"
    assert shown["activation"] == {"kind": "sqlite"}
    assert shown["refiner"] == {"kind": "units"}
    assert shown["network"] == {"allowed_hosts": [], "timeout_s": 30, "max_bytes": 10485760}
    for activation, expected in [
        ({"kind": "qdrant"}, {"collection": "evidence", "path": ".evidence-cache/qdrant"}),
        ({"kind": "command", "command": ["x"]}, {"timeout_s": 300}),
    ]:
        inst = write_installation(tmp_path / "i.yaml", activation)
        shown = tht(installation=inst, group=("config", "show")).json["result"]["activation"]
        if "path" in expected:
            expected["path"] = str(workspace / expected["path"])
        assert shown == {**activation, **expected}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://u:p@h.example/a?b=1&token=t", "https://h.example/a"),
        ("http://[::1]:6333/x", "http://[::1]:6333/x"),
        ("https://h.example/?sig=1&X-Amz-Signature=2&keep=3", "https://h.example/"),
        ("https://u:p/q@h.example", REDACTED),
        ("https://u:12/q@h.example/doc", REDACTED),
    ],
)
def test_clean_url(url: str, expected: str) -> None:
    assert clean_url(url) == expected


def test_redact_keeps_structure_and_scrubs_embedded_urls() -> None:
    settings = {
        "password": "p",
        "nested": {"client_secret": "x", "hosts": ["a", "b"], "n": 3},
        "args": ["--url=https://u:pw@h.example/x", "plain"],
    }
    assert redact(settings) == {
        "password": REDACTED,
        "nested": {"client_secret": REDACTED, "hosts": ["a", "b"], "n": 3},
        "args": ["--url=https://h.example/x", "plain"],
    }
