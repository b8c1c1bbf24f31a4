"""One error hierarchy with stable codes.

Every code lives in ``CODES`` with its exit status, a short title and the fix
to suggest; ``docs/errors.md`` is checked against this table by a test.  The
CLI maps an ``EvidenceError`` to its exit code and JSON object in one place
(``evidence_tool.cli.output``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evidence_tool.jsonvalue import JsonObject, JsonValue

# The public face; tests/test_public_api.py fails if an error class is left out.
__all__ = [
    "CODES",
    "CONTROL_CHARACTERS",
    "EXIT_ACTIVATION",
    "EXIT_AVAILABILITY",
    "EXIT_BUG",
    "EXIT_CONFLICT",
    "EXIT_INTEGRITY",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_SOURCE",
    "EXIT_USAGE",
    "WARNINGS",
    "ActivationError",
    "AvailabilityError",
    "CodeInfo",
    "ConflictError",
    "DescriptorError",
    "Diagnostic",
    "EmbeddingError",
    "EvidenceError",
    "EvidenceWarning",
    "IntegrityError",
    "InvalidFilesError",
    "LockHeldError",
    "NotReadyError",
    "PathOutsideError",
    "SourceError",
    "UnknownNameError",
    "UsageError",
    "WarningInfo",
    "printable",
    "refuse_warnings",
    "with_warnings_refused",
]

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_CONFLICT = 3
EXIT_ACTIVATION = 4
EXIT_SOURCE = 5
EXIT_AVAILABILITY = 6
EXIT_INTEGRITY = 7
EXIT_BUG = 70  # unexpected exception: a defect, reported with a request for a bug report


@dataclass(frozen=True)
class CodeInfo:
    exit_code: int
    title: str
    fix: str


CODES: dict[str, CodeInfo] = {
    "E101": CodeInfo(
        1,
        "frontmatter missing or unterminated",
        "Start the file with a line '---' and close the metadata with a second '---' line.",
    ),
    "E102": CodeInfo(
        1,
        "YAML syntax error or refused YAML feature",
        "Fix the YAML at the given line; anchors, aliases and tags are not allowed.",
    ),
    "E103": CodeInfo(
        1, "duplicate metadata key", "Keep one occurrence of the key and delete the other."
    ),
    "E104": CodeInfo(
        1,
        "unknown metadata key",
        "Remove the key or rename it to the allowed key the message suggests.",
    ),
    "E105": CodeInfo(
        1,
        "missing required metadata",
        "Add the named key (schema_version, id, kind, language, purposes).",
    ),
    "E106": CodeInfo(
        1,
        "invalid metadata value",
        "Correct the value as the message describes (see docs/unit-format.md).",
    ),
    "E107": CodeInfo(
        1,
        "legacy or unsupported schema_version",
        "Convert legacy units with 'tht evidence migrate ROOT'; write schema_version: 4.",
    ),
    "E108": CodeInfo(
        1,
        "kind does not match the folder, or file outside the layout",
        "Move the file to evidence/curated/<kind>/<name>.md or correct 'kind'; rename a file "
        "that is not a unit file to <name>.md or move it out of evidence/curated/; put a "
        "managed folder that links outside the workspace back inside it.",
    ),
    "E109": CodeInfo(
        1,
        "file encoding or size",
        "Save the file as UTF-8 without BOM or NUL bytes, at most 256 KiB.",
    ),
    "E110": CodeInfo(
        1,
        "title missing or repeated",
        "Give the unit exactly one '# Title' line before the first field.",
    ),
    "E111": CodeInfo(
        1,
        "unexpected heading or content outside a field",
        "Move the content under a field heading, or rename the heading as suggested.",
    ),
    "E112": CodeInfo(1, "duplicate field", "Merge the two sections into one field heading."),
    "E113": CodeInfo(
        1, "missing required field", "Add the named '## Field' heading with its content."
    ),
    "E114": CodeInfo(
        1,
        "malformed field payload",
        "Write the field as its type requires (see docs/unit-format.md).",
    ),
    "E115": CodeInfo(
        1,
        "invalid formula SQL",
        "Write exactly one PostgreSQL expression in one ```sql fence; no query, no statement.",
    ),
    "E116": CodeInfo(1, "invalid URL", "Write one absolute http:// or https:// URL."),
    "E117": CodeInfo(
        1,
        "file not in canonical form",
        "Run 'tht evidence fmt PATH' to rewrite the file canonically.",
    ),
    "E118": CodeInfo(
        1,
        "symbolic link loop",
        "Remove the link, or point it at the unit file itself (not at another link of the loop).",
    ),
    "E119": CodeInfo(
        1,
        "Git conflict markers in a unit",
        "Resolve the merge in the file: keep the text you want, delete the marker lines, "
        "then validate and consolidate again.",
    ),
    "E120": CodeInfo(
        1, "duplicate id", "Give each unit its own id; ids are unique in the workspace."
    ),
    "E121": CodeInfo(
        1,
        "reserved id",
        "Choose a new id, or bring the deleted unit back with 'tht workspace evidence restore ID'.",
    ),
    "E122": CodeInfo(
        1,
        "invalid id",
        "Use 'evidence:' followed by segments of [a-z0-9._-] joined by ':' (1-200 chars).",
    ),
    "E140": CodeInfo(
        1,
        "open review items",
        "Edit the unit visibly, retire it, or run 'tht workspace evidence review resolve ID "
        "--note ...'; for a refiner proposal, correct the source document and refresh, or "
        "decide --decision keep.",
    ),
    "E150": CodeInfo(
        1,
        "document source mismatch",
        "Restore the source bytes, or adopt the new source with 'refresh' then 'decide'.",
    ),
    "E160": CodeInfo(
        1,
        "lossless conversion impossible",
        "Correct the legacy unit's named field so v4 can hold it, then migrate again.",
    ),
    "E170": CodeInfo(
        1,
        "ungrounded citation",
        "Cite only ids that retrieval returned for the answer: correct the answer "
        "(or its record of what was retrieved), then run cite-check again.",
    ),
    "E171": CodeInfo(
        1,
        "retrieval below the threshold",
        "Improve the units the missed questions expect (see the misses in 'eval'), or lower "
        "--min-recall / --min-mrr if the threshold was set above what the question set "
        "can reach.",
    ),
    "E172": CodeInfo(
        1,
        "retrieval worse than the compared revision",
        "Look at the questions that rank worse than on the compared revision ('eval "
        "--compare REV' lists each mode's misses) and correct the units the change made "
        "harder to find; or run without --fail-on-drop to accept the drop.",
    ),
    "E180": CodeInfo(
        1,
        "unknown table or view",
        "Correct the name to a relation the warehouse holds (see the 'did you mean'), "
        "or remove it if the table was dropped.",
    ),
    "E181": CodeInfo(
        1,
        "unknown column",
        "Correct the column name (see the 'did you mean'), or remove it if the column was dropped.",
    ),
    "E182": CodeInfo(
        1,
        "ambiguous column reference",
        "Qualify the column in the formula with its table (schema.table.column).",
    ),
    "E183": CodeInfo(
        1,
        "column reference outside the unit's tables",
        "Add the table to the unit's applies_to.tables, or qualify the reference with one of them.",
    ),
    "E184": CodeInfo(
        1,
        "example SQL is not one read-only query",
        "Make the example's SQL block one query that only reads (SELECT or WITH ... SELECT, "
        "no INSERT, UPDATE, DELETE, DDL, COPY, FOR UPDATE or function with side effects), "
        "written in the warehouse's dialect; put a second query in an example of its own.",
    ),
    "E185": CodeInfo(
        6,
        "catalog DDL statement not understood",
        "Correct the statement at the given file:line so PostgreSQL accepts it, or move it out "
        "of the catalog files.",
    ),
    "E186": CodeInfo(
        6,
        "catalog unavailable",
        "Pass an existing DDL file or folder (--ddl) or SQLite database (--sqlite), or correct "
        "evidence.catalog.paths in the installation descriptor.",
    ),
    "E187": CodeInfo(
        6,
        "catalog driver not installed",
        "Install the PostgreSQL driver with: pip install 'evidence-tool[postgres]'; or check "
        "against the warehouse's DDL files (--catalog ddl --ddl PATH) instead.",
    ),
    "E188": CodeInfo(
        1,
        "SQL does not type-check",
        "Correct the SQL (the formula's, or the example's) where the warehouse's message "
        "points (a cast, an operator, a function's arguments), then run the check again.",
    ),
    "E189": CodeInfo(
        6,
        "PostgreSQL catalog unreachable",
        "Set THT_CATALOG_DSN (or the variable evidence.catalog.dsn_env names) to the "
        "warehouse's DSN, and check that its host, port, database, user and password let a "
        "read-only session in.",
    ),
    "E191": CodeInfo(
        1,
        "catalog drift touches a unit",
        "Correct the unit to the warehouse as it is now (see 'tht workspace evidence catalog "
        "diff'), then consolidate with the catalog step to record the catalog it was checked "
        "against.",
    ),
    "E192": CodeInfo(
        1,
        "catalog findings block consolidation",
        "Correct the units the catalog findings name (listed after this error), or set "
        "evidence.catalog.block: false in the installation descriptor to report them "
        "without blocking.",
    ),
    "E190": CodeInfo(
        1,
        "warning refused by --warnings-as-errors",
        "Fix what the warning (named first in the message) says, or run without "
        "--warnings-as-errors to accept it.",
    ),
    "E301": CodeInfo(
        3,
        "file changed since it was read",
        "Read the file again and re-apply your change; the other edit was kept.",
    ),
    "E302": CodeInfo(
        3,
        "journal conflict",
        "Inspect with 'tht workspace evidence recover'; abandon the journal with --abandon.",
    ),
    "E303": CodeInfo(
        3, "archive lock held", "Wait for the named process to finish, or pass --wait SECONDS."
    ),
    "E304": CodeInfo(
        3,
        "stale or unknown comparison",
        "Run 'tht workspace evidence refresh' again and decide on the new revision.",
    ),
    "E305": CodeInfo(
        3,
        "mass retirement refused",
        "Check the source is complete; pass --allow-mass-retire if the retirement is intended.",
    ),
    "E306": CodeInfo(
        3,
        "replace would overwrite units fixed by hand",
        "Pass --overwrite-manual to put the source's text back, or --exclude ID for each "
        "unit to keep as it is (decide --dry-run shows the plan).",
    ),
    "E401": CodeInfo(
        4,
        "activation failed",
        "Fix the index backend, then run 'consolidate' (or 'decide --retry') to activate the pending revision.",
    ),
    "E402": CodeInfo(
        4,
        "embedding service failed",
        "Check that the service in evidence.embedding runs and answers (url, model, api_key_env), then retry; 'search --mode bm25' needs no embeddings.",
    ),
    "E501": CodeInfo(
        5,
        "source acquisition failed",
        "Check what the message names (an import's path, a locator, the network policy "
        "or credentials of a remote source), then refresh again.",
    ),
    "E502": CodeInfo(
        5, "refinement failed", "Check the refiner command and its output, then refresh again."
    ),
    "E503": CodeInfo(
        5,
        "limits exceeded",
        "Refresh in parts with 'tht workspace evidence refresh --source-id ID', or split the "
        "sources or the export: 200 documents, 100 MiB and 10,000 listed files per refresh are "
        "fixed bounds; only one document over max_bytes can be allowed, by raising "
        "evidence.network.max_bytes in the installation.",
    ),
    "E504": CodeInfo(
        5,
        "import input malformed",
        "Correct the file at the line the message names (or export it again from its tool), "
        "then refresh again.",
    ),
    "E601": CodeInfo(
        6,
        "curated tree unavailable",
        "Restore evidence/curated/ (or mount the checkout) before running the command again.",
    ),
    "E602": CodeInfo(
        6,
        "not a Git worktree",
        "Run the command inside a Git checkout ('git init' or clone first).",
    ),
    "E603": CodeInfo(
        6,
        "workspace unavailable",
        "Run the command inside a workspace (a folder holding workspace.yaml, or below one), "
        "pass --workspace-root PATH (or --installation FILE with --workspace ID), or create "
        "one with 'tht workspace new'.",
    ),
    "E604": CodeInfo(
        6,
        "workspace write failed",
        "Free disk space or fix the permissions of the named path, then run the command again.",
    ),
    "E701": CodeInfo(
        7,
        "integrity failure",
        "Restore the named managed file from Git or backup; never edit managed files by hand.",
    ),
    "E702": CodeInfo(
        7,
        "index drift",
        "Re-activate the active revision with 'tht workspace evidence consolidate'.",
    ),
    "E703": CodeInfo(
        7,
        "edit not consolidated",
        "Run 'tht workspace evidence consolidate' and commit the files it writes with the "
        "edit, or undo the edit.",
    ),
    "E704": CodeInfo(
        7,
        "invalid unit file in a checkout",
        "Correct the file as 'tht workspace evidence validate' reports, then run "
        "'tht workspace evidence consolidate'.",
    ),
    "E901": CodeInfo(
        2,
        "usage error",
        "Correct the command line as the message says; run the command with --help to see "
        "its arguments.",
    ),
    "E902": CodeInfo(
        2,
        "invalid descriptor",
        "Correct the key at the path the message names; docs/cli.md shows workspace.yaml and "
        "the installation descriptor.",
    ),
    "E903": CodeInfo(
        2,
        "target already holds a workspace",
        "Choose another folder for 'tht workspace new', or work in the existing workspace.",
    ),
    "E904": CodeInfo(
        2,
        "unknown or ambiguous name",
        "Use a name the workspace holds: the message lists the candidates or the command "
        "that lists them; lengthen a prefix that is too short or matches several.",
    ),
    "E905": CodeInfo(
        2,
        "a step must run first",
        "Run the command the message names first (such as 'tht workspace evidence init' or "
        "'tht workspace evidence consolidate'), then this one again.",
    ),
    "E910": CodeInfo(
        2,
        "invalid question set",
        "Correct the question set at the line the message names: YAML {questions: [...]} or "
        "JSON lines, each with 'question' and 'expected' ids (docs/retrieval.md).",
    ),
    "E911": CodeInfo(
        2,
        "unknown expected id",
        "Correct the id at the line named (the archive never held it), or drop it; a deleted "
        "id is fine: eval reports it as retired.",
    ),
    "E920": CodeInfo(
        2,
        "unauthorized",
        "Send the server's token as 'Authorization: Bearer <token>' (the value of the variable "
        "named by evidence.serve.token_env, THT_SERVE_TOKEN by default).",
    ),
    "E999": CodeInfo(
        70,
        "internal error",
        "This is a bug in evidence-tool: report it with the command and traceback.",
    ),
}


# What a terminal or a log reader acts on instead of showing: C0 controls but tab, DEL,
# C1 controls (U+009B is a CSI of its own), the line and paragraph separators, and the
# bidirectional overrides and isolates (text shown reversed).  Newline is in the class:
# kept only where the caller asks.
CONTROL_CHARACTERS = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, newlines: bool = False) -> str:
    """``text`` safe to write to a terminal or a CI log: every control character escaped
    as Python writes it (``\\x1b``, ``\\n``, ``\\u202e``), tabs kept, newlines kept only
    with ``newlines`` (a block of lines; each line is still escaped).  Values in data
    (JSON, files) keep their bytes: only what is rendered for people is escaped."""
    if CONTROL_CHARACTERS.search(text) is None:
        return text
    if newlines:
        return "\n".join(CONTROL_CHARACTERS.sub(_escape, line) for line in text.split("\n"))
    return CONTROL_CHARACTERS.sub(_escape, text)


@dataclass(frozen=True)
class WarningInfo:
    title: str
    fix: str


# Every warning code the library emits (tests/test_docs.py finds each "Wnnn" in the source
# and checks it is here, and that docs/errors.md has its section opening **Fix.** with
# ``fix``).  Warnings never change the exit status; ``--warnings-as-errors`` refuses them.
WARNINGS: dict[str, WarningInfo] = {
    "W108": WarningInfo(
        "unit file where no unit is read",
        "Move the file to the folder the message names, or delete it if it is a copy.",
    ),
    "W111": WarningInfo(
        "prose heading that looks like a misspelt field",
        "Write the field's heading exactly as the message names it, or reword the heading "
        "if it is prose.",
    ),
    "W122": WarningInfo(
        "likely id change",
        "To keep the new id, nothing; to go back, write the old id in the named file again "
        "and run 'tht workspace evidence restore OLD'.",
    ),
    "W151": WarningInfo(
        "source document missing",
        "Restore the document and run 'tht workspace evidence refresh'; or retire the unit "
        "deliberately: delete its file and run 'tht workspace evidence consolidate'.",
    ),
    "W153": WarningInfo(
        "decision saved, its consolidation not recorded",
        "Run 'tht workspace evidence decide --source-id ID --retry' (the id the message "
        "names): it consolidates what is left and records the outcome.",
    ),
    "W160": WarningInfo(
        "legacy units converted first, or a file left out of the migration",
        "Nothing for the conversion: review and commit the converted files; a file left out "
        "is no legacy unit: convert it by hand or delete it.",
    ),
    "W184": WarningInfo(
        "example SQL in another dialect than the warehouse's",
        "Write the example's SQL in SQLite's dialect if the warehouse is SQLite; if the SQLite "
        "file only stands in for a PostgreSQL warehouse (a test copy), check against the DDL or "
        "the live PostgreSQL instead.",
    ),
    "W185": WarningInfo(
        "an example's result changed, or its query failed when run",
        "Run the query and see whether the change is the data's (nothing to do: the next run "
        "records the new result) or the example's (correct its SQL or its Interpretation); for "
        "a query that failed, correct its SQL.",
    ),
    "W186": WarningInfo(
        "documented enum value never stored",
        "Correct the value to the code the column stores, or delete it if the warehouse no "
        "longer uses it.",
    ),
    "W187": WarningInfo(
        "frequent stored value undocumented",
        "Add a value heading that says what the code means, or check that the unit names the "
        "right column.",
    ),
    "W188": WarningInfo(
        "not checked: the warehouse gave up",
        "Run the check again when the table is not locked or the warehouse is less busy, or "
        "grant the check's user SELECT on the table.",
    ),
    "W189": WarningInfo(
        "a check's machine-local record is damaged: set aside",
        "Nothing to restore (the record is derived): run the check the message names again, "
        "which writes the record anew.",
    ),
    "W402": WarningInfo(
        "embedding service failed: answered by bm25",
        "Check that the service in `evidence.embedding` runs and answers; the next question "
        "uses it again, no restart needed.",
    ),
    "W701": WarningInfo(
        "local-manifest.yaml written again",
        "Nothing, if the edit was a slip; change provenance, deletions or review items with "
        "the commands (restore, review resolve, decide).",
    ),
    "W702": WarningInfo(
        "sqlite-vec installed but not loading",
        "Reinstall the vec extra for this platform, use a Python whose sqlite3 can load "
        "extensions, or uninstall sqlite-vec.",
    ),
    "W801": WarningInfo(
        "consolidation not fully staged",
        "Stage the complete evidence tree: 'tht workspace evidence git-commands' prints the "
        "commands.",
    ),
    "W802": WarningInfo(
        "staged edit not consolidated",
        "Run 'tht workspace evidence consolidate', then stage the evidence tree again.",
    ),
    "W803": WarningInfo(
        "lock or cache not ignored by Git, or tracked",
        "Add the lock file and .evidence-cache/ to .gitignore, and 'git rm --cached' them if "
        "tracked.",
    ),
    "W804": WarningInfo(
        "Git ignores an evidence file a commit must hold",
        "Remove the .gitignore rule that matches the named file, then stage it.",
    ),
    "W805": WarningInfo(
        "unmerged evidence file",
        "Resolve the curated files, then run 'tht workspace evidence consolidate'; never merge "
        "managed files by hand.",
    ),
    "W806": WarningInfo(
        "import input not held by Git",
        "Stage the import input with the evidence tree ('tht workspace evidence git-commands' "
        "names it), or remove its entry from workspace.yaml if the source is gone.",
    ),
}


@dataclass(frozen=True)
class Diagnostic:
    """One finding about a file: data, not an exception."""

    code: str
    message: str
    path: str | None = None
    line: int | None = None
    column: int | None = None
    unit_id: str | None = None

    def with_path(self, path: str | None, unit_id: str | None = None) -> Diagnostic:
        return Diagnostic(
            self.code,
            self.message,
            path,
            self.line,
            self.column,
            unit_id if unit_id is not None else self.unit_id,
        )

    @property
    def hint(self) -> str:
        return CODES[self.code].fix if self.code in CODES else ""

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path or "", self.line or 0, self.column or 0, self.code)

    def to_dict(self) -> JsonObject:
        return {
            "code": self.code,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "unit_id": self.unit_id,
            "hint": self.hint,
        }

    def __str__(self) -> str:
        """One line for people: path and message escaped (``printable``), so a file named
        ``x\\n::error ...`` cannot start a line of its own in a terminal or a CI log."""
        if self.path is None and self.line is None:
            return printable(f"{self.code} {self.message}")
        where = self.path or "<text>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return printable(f"{where}: {self.code} {self.message}")


@dataclass(frozen=True)
class EvidenceWarning:
    """A non-blocking observation, shown to the user and in JSON 'warnings'."""

    message: str
    path: str | None = None
    line: int | None = None
    code: str | None = None
    column: int | None = None  # where known (the catalog's findings); in JSON only then

    def to_dict(self) -> JsonObject:
        out: JsonObject = {
            "code": self.code,
            "message": self.message,
            "path": self.path,
            "line": self.line,
        }
        if self.column is not None:
            out["column"] = self.column
        return out

    def as_error(self) -> Diagnostic:
        """The warning as error E190 (``--warnings-as-errors``), its own code kept in front."""
        return Diagnostic("E190", f"{self.code} {self.message}", self.path, self.line, self.column)


def refuse_warnings(
    warnings: list[EvidenceWarning],
) -> tuple[list[Diagnostic], list[EvidenceWarning]]:
    """(coded warnings as E190 errors, the notes left as warnings) for --warnings-as-errors.

    A note without a code (say, "the repository has no commit yet") is information about
    the run, not a finding about a file, so it stays a warning.
    """
    refused = [w.as_error() for w in warnings if w.code]
    return refused, [w for w in warnings if not w.code]


def with_warnings_refused(
    errors: list[Diagnostic], warnings: list[EvidenceWarning]
) -> tuple[list[Diagnostic], list[EvidenceWarning]]:
    """(errors with the coded warnings added as E190, in report order; the notes left)."""
    refused, notes = refuse_warnings(warnings)
    return sorted([*errors, *refused], key=Diagnostic.sort_key), notes


class EvidenceError(Exception):
    """Base of every error a user can cause; carries a stable code."""

    code = "E000"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        path: str | None = None,
        line: int | None = None,
        column: int | None = None,
        unit_id: str | None = None,
        diagnostics: list[Diagnostic] | None = None,
        details: JsonObject | None = None,  # the --json envelope's "result" and fields
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.unit_id = unit_id
        self.details: JsonObject = details or {}
        self.diagnostics: list[Diagnostic] = diagnostics or [
            Diagnostic(self.code, message, path, line, column, unit_id)
        ]

    @property
    def result(self) -> JsonObject | None:
        """The envelope's "result" the raiser attached (None when it attached none)."""
        found = self.details.get("result")
        return found if isinstance(found, dict) else None

    def add_result(self, **fields: JsonValue) -> None:
        """Add fields to the envelope's "result", keeping what the raiser put there."""
        self.details["result"] = {**(self.result or {}), **fields}

    @property
    def exit_code(self) -> int:
        info = CODES.get(self.code)
        return info.exit_code if info else EXIT_BUG

    def __str__(self) -> str:
        return self.message


class InvalidFilesError(EvidenceError):
    """One or more files need correction; ``diagnostics`` lists every finding."""

    code = "E114"

    def __init__(self, diagnostics: list[Diagnostic], message: str | None = None) -> None:
        ordered = sorted(diagnostics, key=Diagnostic.sort_key)
        first = ordered[0] if ordered else Diagnostic("E114", "invalid")
        super().__init__(
            message or f"{len(ordered)} problem(s) in the evidence files",
            code=first.code,
            path=first.path,
            line=first.line,
            column=first.column,
            unit_id=first.unit_id,
            diagnostics=ordered,
        )


class ConflictError(EvidenceError):
    code = "E301"


class LockHeldError(EvidenceError):
    code = "E303"


class ActivationError(EvidenceError):
    code = "E401"


class EmbeddingError(EvidenceError):
    """The embedding service failed; an activation reports it as E401 (stays pending)."""

    code = "E402"


class SourceError(EvidenceError):
    code = "E501"


class AvailabilityError(EvidenceError):
    code = "E601"


class IntegrityError(EvidenceError):
    code = "E701"


class UsageError(EvidenceError):
    code = "E901"


class DescriptorError(EvidenceError):
    code = "E902"


class UnknownNameError(UsageError):
    """A unit id, revision or source id (or prefix) that names nothing, or several things."""

    code = "E904"


class NotReadyError(UsageError):
    """The command needs a step that has not run yet (init, consolidate, a decision)."""

    code = "E905"


class PathOutsideError(EvidenceError, ValueError):
    """A path from data (a manifest, a comparison, refiner output) that leaves the
    workspace.  Also a ValueError, which callers of ``Layout.resolve_inside`` catch."""

    code = "E108"
