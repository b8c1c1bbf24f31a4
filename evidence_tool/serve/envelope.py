"""One envelope for every answer, MCP's and HTTP's: the CLI's ``--json`` object
(schemas/cli/envelope.schema.json), with the stable error codes."""

from __future__ import annotations

from collections.abc import Callable

from evidence_tool.errors import CODES, Diagnostic, EvidenceError
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.serve.service import Answer

# HTTP status of each code a request can meet (others: 500, never a traceback).
HTTP_STATUS = {
    "E901": 400,
    "E904": 404,
    "E905": 409,
    "E920": 401,
    "E402": 503,
    "E702": 503,
    "E701": 500,
}


def answered(command: str, answer: Answer) -> JsonObject:
    return {
        "ok": True,
        "command": command,
        "workspace": str(answer.workspace.root),
        "result": answer.result,
        "errors": [],
        "warnings": [w.to_dict() for w in answer.warnings],
    }


def health(command: str, result: JsonObject) -> JsonObject:
    """``/v1/health``: every served workspace's active revision, in the same envelope."""
    return {
        "ok": True,
        "command": command,
        "workspace": None,
        "result": result,
        "errors": [],
        "warnings": [],
    }


# A client of the server has no command line to run with --help: what to do instead.
SERVER_HINTS = {
    "E901": "Correct the argument the message names; docs/serve.md lists each tool's "
    "arguments and their bounds (the same for MCP and /v1).",
}


def failed(command: str, exc: EvidenceError) -> JsonObject:
    errors: list[JsonValue] = []
    for diagnostic in exc.diagnostics:
        error = diagnostic.to_dict()
        error["hint"] = SERVER_HINTS.get(diagnostic.code, diagnostic.hint)
        errors.append(error)
    return {
        "ok": False,
        "command": command,
        "workspace": None,
        "result": exc.result,
        "errors": errors,
        "warnings": [],
    }


def crashed(command: str, exc: BaseException) -> JsonObject:
    """A defect: coded E999, the exception's type only (no traceback reaches a client)."""
    message = f"internal error ({type(exc).__name__}); this is a bug in evidence-tool"
    return {
        "ok": False,
        "command": command,
        "workspace": None,
        "result": None,
        "errors": [Diagnostic("E999", message).to_dict()],
        "warnings": [],
    }


def call(command: str, verb: Callable[[], Answer]) -> tuple[int, JsonObject]:
    """(HTTP status, envelope) of one verb's run: coded errors stay coded."""
    try:
        return 200, answered(command, verb())
    except EvidenceError as exc:
        status = HTTP_STATUS.get(exc.code, 400 if CODES.get(exc.code) else 500)
        return status, failed(command, exc)
    except Exception as exc:  # a defect must still answer, coded, and keep the server up
        import logging

        logging.getLogger("evidence_tool.serve").exception("defect while answering %s", command)
        return 500, crashed(command, exc)


def unauthorized(command: str) -> JsonObject:
    """401's body: it never says whether the header, the scheme or the token was wrong."""
    return failed(
        command,
        EvidenceError("a valid bearer token is required for this server", code="E920"),
    )
