"""``cite-check`` and ``config show``."""

from __future__ import annotations

import json
from typing import Any

import click

from evidence_tool.cli.archive_cmds import register
from evidence_tool.cli.output import Report


def cite_check_body(
    s: Any, cited: tuple[str, ...], retrieved: tuple[str, ...], answers: str | None
) -> Report:
    """Classify an answer's cited ids against the retrieved ids (exit 1 if any is ungrounded)."""
    from evidence_tool.activation.citations import cite_check
    from evidence_tool.errors import UsageError

    runs: list[tuple[list[str], list[str]]] = []
    if answers:
        with open(answers, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    runs.append((list(rec["cited"]), list(rec["retrieved"])))
                except (ValueError, KeyError, TypeError):
                    raise UsageError(
                        f"{answers}:{n}: each line must be a JSON object with "
                        "'cited' and 'retrieved' lists"
                    ) from None
    if cited or retrieved:
        runs.append((list(cited), list(retrieved)))
    if not runs:
        raise UsageError("give --cited/--retrieved ids or --answers FILE")
    results = [cite_check(s.archive, c, r) for c, r in runs]
    lines, exit_code = [], 0
    for i, res in enumerate(results, 1):
        lines.append(
            f"answer {i}: grounded {res['grounded']}, ungrounded {res['ungrounded']}, "
            f"unused {res['unused']}" + (f", flags {res['flags']}" if res["flags"] else "")
        )
        if res["ungrounded"]:
            exit_code = 1
    result = results[0] if len(results) == 1 else {"answers": results}
    return Report(result=result, text=lines, exit_code=exit_code)


def config_body(s: Any) -> Report:
    """The effective settings (installation, workspace descriptor, actor), secrets redacted."""
    from evidence_tool.workspace.descriptor import load_workspace_descriptor
    from evidence_tool.workspace.redact import redact

    inst = s.installation
    evidence = inst.evidence
    effective = {
        "installation": inst.path,
        "workspace_root": str(s.root),
        "actor": s.actor(),
        "refiner": evidence.get("refiner", {"kind": "units"}),
        "activation": evidence.get("activation", {"kind": "sqlite"}),
        "network": evidence.get(
            "network", {"allowed_hosts": [], "timeout_s": 30, "max_bytes": 10485760}
        ),
    }
    if (s.root / "workspace.yaml").is_file():
        ws = load_workspace_descriptor(s.root)
        effective["workspace"] = {
            "id": ws.id,
            "name": ws.name,
            "default_language": ws.default_language,
            "evidence": ws.evidence,
        }
    shown = redact(effective)
    return Report(result=shown, text=json.dumps(shown, indent=2, ensure_ascii=False).splitlines())


register(
    "cite-check",
    cite_check_body,
    click.option("--cited", multiple=True, help="A cited unit id (repeat, in order)."),
    click.option(
        "--retrieved", multiple=True, help="A retrieved unit id (repeat, in retrieval order)."
    ),
    click.option(
        "--answers",
        type=click.Path(dir_okay=False, exists=True),
        help="JSON lines of recorded answers: {cited: [...], retrieved: [...]}.",
    ),
)


@click.group("config")
def config() -> None:
    """Effective settings."""


register("config show", config_body, group=config)
