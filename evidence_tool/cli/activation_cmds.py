"""``cite-check`` and ``config show``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from evidence_tool.cli import narrow
from evidence_tool.cli.output import Report
from evidence_tool.cli.workspace_cmds import register
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.record import Record, from_json

if TYPE_CHECKING:
    from evidence_tool.session import Session

NETWORK_DEFAULTS: JsonObject = {"allowed_hosts": [], "timeout_s": 30, "max_bytes": 10485760}


class _Answer(Record, frozen=True):
    """One line of ``--answers`` (other keys ignored)."""

    cited: tuple[str, ...]
    retrieved: tuple[str, ...]


def _read_answers(answers: str) -> list[tuple[list[str], list[str], int]]:
    """``{"cited": [...], "retrieved": [...]}`` per line; blank lines are skipped."""
    from evidence_tool.errors import UsageError

    runs = []
    # surrogateescape: a byte that is not UTF-8 is refused with its own line number,
    # not at whatever line the decoder's read-ahead reached.
    with open(answers, encoding="utf-8", errors="surrogateescape") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:
                raise UsageError(
                    f"{answers}:{n}: the line is not UTF-8 text: save the file as UTF-8",
                    path=answers,
                    line=n,
                ) from None
            try:  # a string where a list belongs (split into characters) is refused too
                rec = from_json(_Answer, json.loads(line))
            except (ValueError, RecursionError):  # RecursionError: nested past json's depth
                raise UsageError(
                    f"{answers}:{n}: each line must be a JSON object whose 'cited' and "
                    "'retrieved' are lists of unit ids",
                    path=answers,
                    line=n,
                ) from None
            runs.append((list(rec.cited), list(rec.retrieved), n))
    return runs


def cite_check_body(
    s: Session, cited: tuple[str, ...], retrieved: tuple[str, ...], answers: str | None
) -> Report:
    """Classify an answer's cited ids against the retrieved ids (exit 1 if any is ungrounded)."""
    from evidence_tool.activation.citations import classify, ungrounded_errors
    from evidence_tool.cli.reporters.text_lines import cite_check_lines
    from evidence_tool.errors import UsageError

    runs: list[tuple[list[str], list[str], int | None]] = []
    runs += _read_answers(answers) if answers else []
    if cited or retrieved:
        runs.append((list(cited), list(retrieved), None))
    if not runs:
        raise UsageError("give --cited/--retrieved ids or --answers FILE (with at least one line)")
    context = s.citation_context()
    checks = [classify(context, c, r) for c, r, _ in runs]
    errors = [
        e
        for n, (res, (_, _, line)) in enumerate(zip(checks, runs, strict=True), 1)
        for e in ungrounded_errors(res, n, answers if line else None, line)
    ]
    ok = all(res.ok for res in checks)
    results = [res.to_json() for res in checks]
    # --answers always yields {"answers": [...]}, whatever the number of lines, so a
    # pipeline reads one shape; --cited/--retrieved alone yields the one result.
    result: JsonObject = results[0]
    if answers:
        result = {"revision": context.revision, "ok": ok, "answers": [*results]}
    return Report(result=result, errors=errors, text=cite_check_lines(context.revision, results))


def config_body(s: Session) -> Report:
    """The effective settings (installation, workspace descriptor, actor), secrets redacted."""
    from evidence_tool.activation.backends import effective_activation
    from evidence_tool.workspace.descriptor import load_workspace_descriptor
    from evidence_tool.workspace.redact import redact

    inst = s.installation
    evidence = inst.evidence
    effective: dict[str, object] = {  # JSON boundary: config show; catalog defaults are objects
        "installation": inst.path,
        "workspace_root": str(s.root),
        "actor": s.actor(),
        "refiner": evidence.get("refiner", {"kind": "units"}),
        "activation": effective_activation(narrow.obj(evidence.get("activation", {})), s.layout),
        # Defaults merged under what the installation sets, key by key.
        "network": {**NETWORK_DEFAULTS, **narrow.obj(evidence.get("network", {}))},
    }
    if "embedding" in evidence:  # the key's variable is named, never read here
        from evidence_tool.embedding import effective_embedding

        effective["embedding"] = effective_embedding(narrow.obj(evidence["embedding"]))
    if "catalog" in evidence:  # the DSN's variable is named, never read here
        from evidence_tool.catalog.settings import CATALOG_DEFAULTS

        effective["catalog"] = {**CATALOG_DEFAULTS, **narrow.obj(evidence["catalog"])}
    ws = load_workspace_descriptor(s.root)  # a workspace has one (Session.open checks)
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
