"""Refiners turn one changed document into a complete proposal of v4 units (SPEC 6.2).

``units`` (built in) reads the units written in the draft; ``command`` runs an
external program with one JSON request on stdin and reads one JSON response
on stdout.  A refiner never sees another document or earlier state.  Anything
a curator must look at (an invalid unit, an excerpt not in the source) is a
review item on the proposal; only a broken refiner is a failure (E502).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from evidence_tool.errors import EvidenceError
from evidence_tool.jsonvalue import JsonObject, JsonValue
from evidence_tool.record import Record
from evidence_tool.sources.identity import Acquired, DocumentMeta, split_units
from evidence_tool.sources.records import DocumentFacts, NotImportedItem, ReviewCode, ReviewItem
from evidence_tool.unit import Unit, parse_unit
from evidence_tool.unit.fields import headings_for
from evidence_tool.unit.schemas import load_schema

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_H1 = re.compile(r"^ {0,3}#(?:[ \t]|$)")
_H2 = re.compile(r"^ {0,3}##[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


def _trim(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n").rstrip()


def field_excerpts(chunk: str, unit: Unit) -> list[str]:
    """One excerpt per nonempty field, in source order, each a verbatim slice of ``chunk``:
    the built-in refiner's excerpts.  A light line scan: field headings are exact ``##
    Heading`` lines of the unit's kind and language outside fenced blocks, the lines the
    unit parser treats as structural; a miss is checked against the source and becomes a
    review item, never a false claim."""
    lines = chunk.split("\n")
    close = next((i for i in range(1, len(lines)) if lines[i] == "---"), len(lines) - 1)
    headings = headings_for(unit.kind, unit.language)
    sections: list[list[str]] = []
    current: list[str] | None = None
    fence: str | None = None
    for line in lines[close + 1 :]:
        if fence is not None:
            if line.strip().startswith(fence) and set(line.strip()) == {fence[0]}:
                fence = None
            if current is not None:
                current.append(line)
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
        elif _H1.match(line):
            current = None
            continue
        else:
            h2 = _H2.match(line)
            if h2 and h2.group(1) in headings:
                current = []
                sections.append(current)
                continue
        if current is not None:
            current.append(line)
    out: list[str] = []
    for section in sections:
        text = _trim(section)
        if text and text not in out:
            out.append(text)
    return out


@dataclass
class ProposedUnit:
    unit: Unit
    excerpts: list[str]
    # The unit's canonical text when the refiner already rendered it (an import): the
    # comparison then does not render it a second time. None: render when needed.
    markdown: str | None = None


@dataclass
class Proposal:
    units: list[ProposedUnit] = field(default_factory=list)
    review_items: list[ReviewItem] = field(default_factory=list)
    _raised: set[ReviewItem] = field(default_factory=set, repr=False)
    # Import sources only (None/empty for documents): the import record replace stores,
    # the elements no unit field holds, and what the format skipped by design, by kind.
    record: str | None = None
    not_imported: list[NotImportedItem] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._raised |= set(self.review_items)

    def raise_item(self, code: str, message: str, unit_id: str | None = None) -> None:
        item = ReviewItem(code, message, unit_id)
        if item not in self._raised:  # a set beside the list: thousands of items stay linear
            self._raised.add(item)
            self.review_items.append(item)


PROTOCOL = 1  # the refiner protocol's version: RefinerRequest's tag


class RequestUnit(Record, frozen=True):
    """A live unit from the source, sent to the refiner as context."""

    id: str
    path: str
    markdown: str


class RefinerRequest(Record, frozen=True, tag_field="protocol", tag=PROTOCOL):
    """What a refiner is asked (schemas/refiner-request.schema.json).  An import's request
    carries only its language: an importer reads files, not a draft.  Its JSON opens with
    ``"protocol": 1`` (the tag: a request of another protocol is refused on reading)."""

    source_id: str
    locator: str
    kind: str
    content_hash: str
    language: str
    text: str
    document: DocumentFacts
    current_units: tuple[RequestUnit, ...] = ()


class ResponseUnit(Record, frozen=True):
    markdown: str
    excerpts: tuple[str, ...]


class ResponseItem(Record, frozen=True):
    message: str
    unit_id: str | None = None


class RefinerResponse(Record, frozen=True):
    """A command refiner's answer (schemas/refiner-response.schema.json), once valid."""

    units: tuple[ResponseUnit, ...]
    review_items: tuple[ResponseItem, ...] = ()


def refinement_error(locator: str, why: str) -> EvidenceError:
    return EvidenceError(f"refining {locator} failed: {why}", code="E502")


def _add_markdown(
    proposal: Proposal,
    markdown: str,
    excerpts: list[str] | None,
    where: str,
    unit_id: str | None = None,
    rendered_from: Unit | None = None,
) -> None:
    """Parse one proposed unit; an invalid one is a review item naming its first problem
    (on ``unit_id`` when the parse cannot tell the id, as for a file too large).
    ``rendered_from``: the typed unit ``markdown`` is the rendering of; when it parses back
    equal, ``markdown`` is its canonical text and is kept (rendered once)."""
    result = parse_unit(markdown)
    if result.unit is None:
        first = result.errors[0] if result.errors else None
        detail = f"{first.code} {first.message}" if first else "not a v4 unit"
        proposal.raise_item(
            ReviewCode.INVALID_UNIT, f"{where}: {detail}", result.unit_id or unit_id
        )
        return
    found = excerpts if excerpts is not None else field_excerpts(markdown, result.unit)
    canonical = markdown if rendered_from is not None and result.unit == rendered_from else None
    proposal.units.append(ProposedUnit(result.unit, list(dict.fromkeys(found)), canonical))


class UnitsRefiner:
    """The draft already holds the units; each unit's excerpts are its verbatim field texts."""

    name = "units"

    def identity(self) -> JsonObject:
        return {"kind": "units"}  # its code is the tool's: the cache key names the version

    def refine(self, doc: Acquired, request: RefinerRequest) -> Proposal:
        proposal = Proposal()
        _, chunks = split_units(doc.text)
        for line, chunk in chunks:
            _add_markdown(proposal, chunk, None, f"unit at line {line} of the draft")
        return proposal


class CommandRefiner:
    """An external program: JSON request on stdin, JSON response on stdout, within a timeout."""

    name = "command"

    def __init__(self, command: list[str], timeout_s: float = 300.0, cwd: str | None = None):
        self.command = command
        self.timeout_s = timeout_s
        self.cwd = cwd

    @cached_property
    def _identity(self) -> JsonObject:
        programs: JsonObject = {}
        for arg in self.command:
            # A script or binary named on the command line: a new version of it is
            # another refiner, whose earlier proposals must not be reused.
            path = Path(self.cwd or ".", arg)
            with contextlib.suppress(OSError):
                if path.is_file():
                    programs[arg] = _file_identity(path)
        return {"kind": "command", "command": list(self.command), "programs": programs}

    def identity(self) -> JsonObject:
        """What decides its answers: the command line and the bytes of the files it names
        (not the timeout, which only decides whether there is an answer)."""
        return self._identity

    def _run(self, doc: Acquired, request: RefinerRequest) -> bytes:
        data = json.dumps(request.to_json(), ensure_ascii=False).encode("utf-8")
        try:
            # A new session, so a timeout kills the refiner's children too.
            proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise refinement_error(doc.locator, f"cannot run the refiner: {exc.strerror}") from None
        try:
            out, err = proc.communicate(data, timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise refinement_error(
                doc.locator, f"the refiner timed out after {self.timeout_s:g} s"
            ) from None
        if proc.returncode != 0:
            tail = " | ".join(err.decode("utf-8", "replace").strip().splitlines()[-3:])
            raise refinement_error(
                doc.locator, f"the refiner exited {proc.returncode}" + (f": {tail}" if tail else "")
            )
        return out

    def refine(self, doc: Acquired, request: RefinerRequest) -> Proposal:
        out = self._run(doc, request)
        try:
            response: JsonValue = json.loads(out)
        except ValueError as exc:
            raise refinement_error(
                doc.locator, f"the refiner printed invalid JSON ({exc})"
            ) from None
        problems = sorted(_response_validator().iter_errors(response), key=lambda e: list(e.path))
        if problems:
            where = "/".join(str(p) for p in problems[0].absolute_path) or "(top level)"
            raise refinement_error(
                doc.locator,
                f"the response does not match refiner-response.schema.json at {where}: "
                f"{problems[0].message}",
            )
        answer = RefinerResponse.from_json(response)
        proposal = Proposal()
        for n, unit in enumerate(answer.units):
            _add_markdown(proposal, unit.markdown, list(unit.excerpts), f"proposed unit {n + 1}")
        for item in answer.review_items:
            proposal.raise_item(ReviewCode.REFINER, item.message, item.unit_id)
        return proposal


HASHED_UP_TO = 64 * 1024 * 1024


def _file_identity(path: Path) -> str:
    """The sha256 of a script or binary; a larger file (a model's weights) by size and
    modification time, so that each refresh does not read gigabytes to name its refiner."""
    info = path.stat()
    if info.st_size > HASHED_UP_TO:
        return f"size={info.st_size} mtime_ns={info.st_mtime_ns}"
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@cache
def _response_validator() -> Any:
    import jsonschema

    schema = load_schema("refiner-response.schema.json")
    return jsonschema.validators.validator_for(schema)(schema)


def refiner_for(
    settings: Mapping[str, JsonValue], cwd: str | None = None
) -> UnitsRefiner | CommandRefiner:
    """The refiner of the installation's ``evidence.refiner`` section (default: ``units``;
    the section is schema-checked when the installation is loaded)."""
    kind = settings.get("kind", "units")
    if kind == "units":
        return UnitsRefiner()
    command = settings.get("command")
    if not command or not isinstance(command, list):
        raise EvidenceError("evidence.refiner.command is required for kind 'command'", code="E902")
    timeout = settings.get("timeout_s", 300)
    seconds = float(timeout) if isinstance(timeout, int | float) else 300.0
    return CommandRefiner([str(a) for a in command], seconds, cwd)


def build_request(
    doc: Acquired, meta: DocumentMeta, language: str, current: Iterable[RequestUnit] = ()
) -> RefinerRequest:
    """The refiner request (schemas/refiner-request.schema.json)."""
    return RefinerRequest(
        doc.source_id,
        doc.locator,
        doc.kind,
        doc.content_hash,
        language,
        doc.text,
        meta.facts(),
        tuple(current),
    )


def check_excerpts(proposal: Proposal, text: str, verbatim: Collection[str] = frozenset()) -> None:
    """Every excerpt must occur verbatim in the normalized source, else a review item.
    ``verbatim``: texts known to be whole parts of ``text`` (an import record's spans),
    found without a search: 100,000 searches of a large record would be quadratic."""
    for pu in proposal.units:
        if not pu.excerpts:
            proposal.raise_item(
                ReviewCode.EXCERPT_NOT_FOUND,
                "the unit has no supporting excerpt from the source",
                pu.unit.id,
            )
        for excerpt in pu.excerpts:
            if excerpt not in verbatim and excerpt not in text:
                proposal.raise_item(
                    ReviewCode.EXCERPT_NOT_FOUND,
                    f"the excerpt {excerpt[:60]!r} does not occur verbatim in the source",
                    pu.unit.id,
                )
