"""Import sources (issue 16): a descriptor entry ``{kind: import, format, path}`` as a candidate.

The path is a file or folder inside the workspace or, when the workspace lies in
a Git work tree, anywhere inside that work tree (``../dbt`` beside the workspace:
the input is committed with it, so a clone can refresh); always outside what the
tool and Git own (``evidence/``, ``workspace.yaml``, ``.git``, the cache, the
lock) and never a folder that holds the workspace.  A symbolic link that leads
outside those bounds, or onto what is owned, is refused (E501), never followed.
Acquiring an import source lists its files and hashes them: the importer runs
later, and only when the hash changed.

Refining one (``ImportRefiner``) runs the format's importer, then renders and parses
each unit again (an invalid one is a review item, as for a draft) and checks each span
against the file's bytes at its offsets, so an importer can never make a unit claim a
text the source does not hold (a mismatch is a review item and the span is not cited).
The proposal carries the import record built from the verified spans, plus what the
format holds that no unit field does (``not_imported``) and what it skipped by design
(``skipped``), for the comparison.
"""

from __future__ import annotations

import hashlib
import mmap
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidence_tool.archive.clock import now
from evidence_tool.errors import EvidenceError, SourceError
from evidence_tool.importers.base import (
    Identity,
    Imported,
    ImportInput,
    ImportResult,
    SourceFile,
    Span,
    check_options,
    identity_of,
    open_no_links,
    option_error,
)
from evidence_tool.importers.formats import FORMATS, importer_for
from evidence_tool.jsonvalue import JsonObject
from evidence_tool.sources import import_record
from evidence_tool.sources.identity import Acquired, Candidate, source_id
from evidence_tool.sources.import_record import Located
from evidence_tool.sources.policy import MAX_LISTED, NetworkPolicy, SourceSpec
from evidence_tool.sources.records import NotImportedItem, ReviewCode
from evidence_tool.sources.refiner import Proposal, ProposedUnit, RefinerRequest, _add_markdown
from evidence_tool.unit import render
from evidence_tool.unit._speed.roundtrip import renders_back
from evidence_tool.unit.hashing import canonical_json
from evidence_tool.workspace.layout import DESCRIPTOR, Layout

KIND = "import"
# What an import path may not be or lie under: the tool's and Git's own files.
OWNED = (DESCRIPTOR, "evidence", ".git", ".evidence-cache", ".evidence-archive.lock")


def import_locator(fmt: str, rel: str) -> str:
    return f"import:{fmt}:{rel}"


@dataclass(frozen=True)
class ImportAcquired(Acquired):
    """An import source's identity and files; ``raw``/``text`` become its import record
    once the importer ran (refresh replaces them), so decide stores the record."""

    format: str = ""
    key: str = ""  # "evidence.sources[N]"
    root: str = ""  # folder the files' paths are relative to
    files: tuple[SourceFile, ...] = ()
    stamps: tuple[tuple[str, int, int], ...] = ()  # (path, size, mtime_ns) when hashed
    options: tuple[tuple[str, Any], ...] = ()
    max_bytes: int = 0
    input_bytes: int = 0

    @property
    def bytes_read(self) -> int:
        return self.input_bytes

    def input(self, language: str) -> ImportInput:
        return ImportInput(
            self.files, dict(self.options), language, self.max_bytes, self.key, self.root
        )


class InputMissing(SourceError):
    """An import's path does not exist: that source fails, the other sources go on."""


def _refuse(key: str, rel: str, why: str, cls: type[SourceError] = SourceError) -> SourceError:
    return cls(f"{key}.path: {rel} {why}", path=rel, details={"result": {"key_path": key}})


def _under(real: str, top: str) -> bool:
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def repo_top(root: Path) -> str | None:
    """The real path of the Git work tree holding ``root`` (the nearest folder with a
    ``.git`` entry, a worktree's file included), or None. Read from the file system: the
    sources layer never runs Git."""
    here = os.path.realpath(root)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def bound(layout: Layout) -> str:
    """The folder an import's files must lie in: the Git work tree holding the workspace,
    else the workspace itself."""
    return repo_top(layout.root) or os.path.realpath(layout.root)


def allowed(layout: Layout, path: str | os.PathLike[str]) -> bool:
    """True when ``path`` (links resolved) lies inside the bound of ``bound``."""
    return _under(os.path.realpath(path), bound(layout))


def _owned(layout: Layout, real: str) -> str | None:
    """The owned entry ``real`` is or lies under (or the workspace it holds), if any."""
    root = os.path.realpath(layout.root)
    for name in OWNED:
        if _under(real, os.path.join(root, name)):
            return name
    top = repo_top(layout.root)
    if top is not None and _under(real, os.path.join(top, ".git")):
        return ".git"
    if _under(root, real):
        return "the workspace itself (the path holds it)"
    return None


def _join(layout: Layout, rel: str) -> Path | None:
    """``rel`` joined to the workspace root: '/'-separated and normalized, '..' only as
    leading segments (``../dbt``); None for anything else (absolute, NUL, backslash)."""
    if "\x00" in rel or rel.startswith("/") or "\\" in rel or not rel:
        return None
    parts = rel.split("/")
    ups = 0
    while ups < len(parts) and parts[ups] == "..":
        ups += 1
    rest = parts[ups:]
    if not rest or any(p in ("", ".", "..") for p in rest):
        return None
    return Path(os.path.normpath(layout.root.joinpath(*parts)))


def check_path(layout: Layout, rel: str, key: str) -> Path:
    """The absolute path of an import entry's ``path``: inside the workspace or the Git
    work tree holding it, outside what the tool owns (E501 naming the key otherwise); it
    must exist (``InputMissing``, E501, otherwise)."""
    path = _join(layout, rel)
    if path is None:
        raise _refuse(
            key,
            repr(rel),
            "is not a normalized relative path ('/'-separated, '..' only at its start, "
            "never absolute)",
        )
    top = repo_top(layout.root)
    lexical = os.path.normpath(os.path.join(os.path.realpath(layout.root), rel))
    if not _under(lexical, top or os.path.realpath(layout.root)):
        if top is None:
            raise _refuse(
                key,
                rel,
                "lies outside the workspace, which is in no Git work tree: an import reads "
                "only inside the workspace, or inside the Git work tree that holds it; put "
                "the workspace and the export in one repository, or the export under imports/",
            )
        raise _refuse(
            key,
            rel,
            f"lies outside the Git work tree that holds the workspace ({top}): an import "
            "reads only inside it, so that a clone has the input too; move the export into "
            "the repository (beside the workspace, e.g. ../dbt) and add that path",
        )
    _refuse_owned(layout, lexical, rel, key)  # owned whether or not it exists yet
    if not os.path.lexists(path):
        raise _refuse(
            key,
            rel,
            "does not exist: export the data there (in a clone: commit it with the "
            "workspace, see 'tht workspace evidence git-commands'), correct the path, or "
            "remove the entry from workspace.yaml (its source is then marked missing)",
            InputMissing,
        )
    real = os.path.realpath(path)
    if not allowed(layout, path):
        raise _refuse(
            key,
            rel,
            "leads outside the workspace's Git work tree (or, outside Git, the workspace) "
            "through a symbolic link; it is refused: put the data itself there",
        )
    _refuse_owned(layout, real, rel, key)
    return path


def _refuse_owned(layout: Layout, real: str, rel: str, key: str) -> None:
    owned = _owned(layout, real)
    if owned is not None:
        raise _refuse(
            key,
            rel,
            f"is or lies under {owned}, which the tool or Git owns: put import data in a "
            "folder of its own, such as imports/ or ../dbt beside the workspace",
        )


def _walk(layout: Layout, top: Path, rel_top: str, key: str, limit: int) -> list[tuple[str, Path]]:
    """(path relative to ``top``, real path) of every regular file under ``top``: hidden
    entries (``.git``, ``.DS_Store``) are skipped, links are followed only inside the
    workspace and never onto what the tool owns.  E503 as soon as more than ``limit``
    files are found: a huge tree is not walked to the end."""
    out: list[tuple[str, Path]] = []
    seen: set[str] = set()
    stack: list[tuple[Path, str]] = [(top, "")]
    while stack:
        folder, prefix = stack.pop()
        real = os.path.realpath(folder)
        if real in seen:  # a link loop inside the workspace
            continue
        seen.add(real)
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.name.startswith("."):
                continue
            rel = f"{prefix}{entry.name}"
            path = Path(entry.path)
            if entry.is_symlink():
                target = os.path.realpath(path)
                if not allowed(layout, path) or _owned(layout, target):
                    raise _refuse(
                        key,
                        f"{rel_top}/{rel}",
                        "is a symbolic link leading outside the import folder's allowed "
                        "places (outside the workspace, or onto what the tool owns); it is "
                        "refused: replace it with the file itself",
                    )
            try:
                is_dir, is_file = entry.is_dir(), entry.is_file()
            except OSError:  # ELOOP: a link loop (a -> b -> a) leads to no file at all
                raise _refuse(
                    key,
                    f"{rel_top}/{rel}",
                    "is a symbolic link loop: it leads to no file; remove it or replace "
                    "it with the file itself",
                ) from None
            if is_dir:
                stack.append((path, rel + "/"))
            elif is_file:
                out.append((rel, _real_inside(layout, path, key, f"{rel_top}/{rel}")))
                if len(out) > limit:
                    raise SourceError(
                        f"{rel_top} holds more than {limit} files; an import source reads at "
                        "most that many: point the entry at the folder that holds the export",
                        code="E503",
                        path=rel_top,
                    )
            # Sockets, FIFOs and devices are not data: skipped.
    return sorted(out)


def _real_inside(layout: Layout, path: Path, key: str, shown: str) -> Path:
    """The real path the file will be read at, checked once more: a file swapped for a link
    since the entry was listed (its type is the listing's) must not lead the hash outside
    the import's bounds (``bound``) or onto what the tool owns.  Every read then opens this real path with no
    link followed, so a later swap is refused rather than followed."""
    real = os.path.realpath(path)
    if not _under(real, bound(layout)) or _owned(layout, real):
        raise _refuse(
            key,
            shown,
            "became a symbolic link leading outside the import folder's allowed places "
            "while it was listed; it is refused: replace it with the file itself",
        )
    return Path(real)


def _hash_file(path: Path, shown: str) -> tuple[str, int, int, Identity]:
    """(sha256, size, mtime_ns, identity) of a regular file, read in blocks from a
    descriptor opened with no link followed; every later read checks it opens the file
    of that identity (``SourceFile``), so what is imported is what was hashed."""
    fd, info = open_no_links(path, shown)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            digest = hashlib.file_digest(handle, "sha256")
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if identity_of(after) != identity_of(info):
        raise SourceError(f"{shown} changed while it was hashed; refresh again", path=shown)
    return digest.hexdigest(), info.st_size, info.st_mtime_ns, identity_of(info)


def _content_hash(spec: SourceSpec, entries: list[tuple[str, str]]) -> str:
    """sha256 over the entry's format, options and language and each file's (path, sha256)
    in path order: any change to what the importer would be given is a new version."""
    digest = hashlib.sha256(
        canonical_json(
            {
                "format": spec.format,
                "options": spec.options,
                "language": spec.language,
            }
        )
    )
    for rel, sha in entries:
        digest.update(f"\n{rel}\x00{sha}".encode())
    return digest.hexdigest()


def list_files(
    layout: Layout, rel: str, key: str, limit: int = MAX_LISTED
) -> tuple[str, list[tuple[str, Path]]]:
    """(the folder the files' paths are relative to, [(path, real path)]) of an entry's
    path, every check of ``check_path`` and of the folder's links applied.  An OSError
    of the walk (a link or folder swapped while ``realpath`` resolved it: EINVAL, ENOENT)
    is E501, never exit 70."""
    try:
        path = check_path(layout, rel, key)
        if path.is_dir():
            return rel, _walk(layout, path, rel, key, limit)
        root = rel.rsplit("/", 1)[0] if "/" in rel else ""
        return root, [(path.name, _real_inside(layout, path, key, rel))]
    except OSError as exc:
        raise SourceError(
            f"{rel} changed while its files were listed ({exc.strerror}); run the command "
            "again once the export is complete",
            path=rel,
        ) from None


def _fetch(layout: Layout, spec: SourceSpec, key: str, policy: NetworkPolicy) -> ImportAcquired:
    rel = spec.path
    root, found = list_files(layout, rel, key, policy.max_listed)
    files, stamps, hashes = [], [], []
    total = 0
    for name, real in found:
        shown = f"{root}/{name}" if root else name
        sha, size, mtime, identity = _hash_file(real, shown)
        total += size
        if total > policy.max_total_bytes:
            raise SourceError(
                f"{rel} holds more than {policy.max_total_bytes} bytes; one refresh reads "
                "at most that much: split the export",
                code="E503",
                path=rel,
            )
        files.append(SourceFile(name, real, size, shown, identity))
        stamps.append((name, size, mtime))
        hashes.append((name, sha))
    locator = import_locator(spec.format, rel)
    options = spec.options
    return ImportAcquired(
        source_id(locator),
        locator,
        KIND,
        b"",
        "",
        _content_hash(spec, hashes),
        {
            "format": spec.format,
            "path": rel,
            "files": len(files),
            "bytes": total,
            "read_at": now(),
        },
        spec.language,
        spec.title,
        format=spec.format,
        key=key,
        root=root,
        files=tuple(files),
        stamps=tuple(stamps),
        options=tuple(sorted(options.items())),
        max_bytes=policy.max_bytes,
        input_bytes=total,
    )


def check_entry(spec: SourceSpec, key: str) -> None:
    """The format is known and its options are its own (E902 naming the key)."""
    if spec.format not in FORMATS:
        known = ", ".join(sorted(FORMATS))
        raise option_error(
            f"{key}.format", f"unknown source format {spec.format!r}; the formats are: {known}"
        )
    known_options = getattr(importer_for(spec.format), "options", None)
    if known_options is not None:
        check_options(spec.options, known_options, key)


def discover(layout: Layout, sources: list[SourceSpec], policy: NetworkPolicy) -> list[Candidate]:
    """One candidate per import entry (nothing read yet); two entries naming one format
    and path are refused (E902), since they would be one source."""
    found: list[Candidate] = []
    keys: dict[str, str] = {}
    for index, spec in enumerate(sources):
        if spec.kind != KIND:
            continue
        key = f"evidence.sources[{index}]"
        check_entry(spec, key)
        locator = import_locator(spec.format, spec.path)
        if locator in keys:
            raise option_error(
                key, f"the same import as {keys[locator]} ({locator}); remove one of them"
            )
        keys[locator] = key

        def fetch(spec: SourceSpec = spec, key: str = key) -> Acquired:
            return _fetch(layout, spec, key, policy)

        found.append(Candidate(source_id(locator), locator, KIND, fetch))
    return found


MISMATCH = "span-mismatch"


class ImportRefiner:
    """Proposals of one import source; its identity names the format and options (the
    tool's version is in every cache key), so a changed importer refines again."""

    name = "import"

    def __init__(self, fmt: str, options: JsonObject) -> None:
        self.format = fmt
        self.options = options  # the descriptor's, as written there (a JSON boundary)

    def identity(self) -> JsonObject:
        return {"kind": "import", "format": self.format, "options": self.options}

    def refine(self, doc: Acquired, request: RefinerRequest) -> Proposal:
        assert isinstance(doc, ImportAcquired)
        source = doc.input(request.language)
        result = importer_for(self.format).read(source)
        proposal = build_proposal(doc, source, result)
        _check_unchanged(doc)  # after the spans were verified too: all of one content
        return proposal


def for_source(doc: ImportAcquired) -> ImportRefiner:
    return ImportRefiner(doc.format, dict(doc.options))


def _check_unchanged(doc: ImportAcquired) -> None:
    """E501 when a file changed while it was hashed and imported: the proposal would not
    be the one of the hashed content.  The file is opened as every read opens it (no link
    followed, the identity hashed checked), never stat'ed through a link."""
    for (name, size, mtime), f in zip(doc.stamps, doc.files, strict=True):
        shown = f"{doc.root}/{name}" if doc.root else name
        try:
            info: os.stat_result | None = f.stat_now()
        except SourceError:
            info = None
        if info is None or (info.st_size, info.st_mtime_ns) != (size, mtime):
            raise SourceError(
                f"{shown} changed while it was being imported; refresh again", path=shown
            )


def _locate(source: ImportInput, spans: list[Span]) -> tuple[dict[Span, Located], list[Span]]:
    """Verified spans with their lines, and the spans that do not hold their text. Each
    file is mapped, not read: a 100 MB input costs the pages the spans touch."""
    found: dict[Span, Located] = {}
    bad: list[Span] = []
    by_file: dict[str, list[Span]] = defaultdict(list)
    for span in set(spans):
        by_file[span.path].append(span)
    for path, group in sorted(by_file.items()):
        f = source.file(path)
        if f is None:
            bad.extend(group)
            continue
        with f.open() as handle:  # the file hashed, no link followed
            size = os.fstat(handle.fileno()).st_size
            data: Any = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
            try:
                _locate_in(data, size, source.shown(path), group, found, bad)
            finally:
                if size:
                    data.close()
    return found, bad


def _locate_in(
    data: Any,
    size: int,
    shown: str,
    group: list[Span],
    found: dict[Span, Located],
    bad: list[Span],
) -> None:
    pos, line = 0, 1  # line of byte ``pos``: counted forward, spans in offset order
    for span in sorted(group, key=lambda s: (s.start, s.end)):
        if not (0 <= span.start < span.end <= size):
            bad.append(span)
            continue
        line += data[pos : span.start].count(b"\n")
        pos = span.start
        raw = data[span.start : span.end]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text != span.text:
            bad.append(span)
            continue
        last = line + raw.rstrip(b"\n").count(b"\n")
        found[span] = Located(shown, span.start, span.end, line, last, span.text)


def _where(located: dict[Span, Located], span: Span | None) -> str | None:
    return located[span].where if span is not None and span in located else None


# Items that say an element is incomplete rather than wrong: the element is left out of the
# proposal and listed as not imported with what to write where (docs/importers.md, "Adopt
# what is complete"), so the rest stays adoptable without editing the source project.
INCOMPLETE = {
    "meaning-missing": "values without meanings",
    "not-representable": "a text only the source tool can render",
}


def build_proposal(doc: ImportAcquired, source: ImportInput, result: ImportResult) -> Proposal:
    """The proposal of an import: units with verified span texts as excerpts, the
    importer's review items, the import record, not-imported elements and skip counts."""
    proposal = Proposal()
    incomplete: dict[str, tuple[str, str]] = {}  # unit id -> (code, message), first wins
    for code, message, unit_id in result.review_items:
        if code in INCOMPLETE and unit_id is not None:
            incomplete.setdefault(unit_id, (code, message))
        else:
            proposal.raise_item(code, message, unit_id)
    spans = [s for item in result.units for s in item.spans]
    spans += [n.span for n in result.not_imported if n.span is not None]
    spans += result.item_spans.values()
    located, bad = _locate(source, spans)
    bad_set = set(bad)
    cited: list[Located] = []
    cited_by: dict[Located, list[str]] = defaultdict(list)  # for show: whose place it is
    held: dict[str, NotImportedItem] = {}
    for item in result.units:
        uid = item.unit.id
        if uid in incomplete:
            code, message = incomplete[uid]
            at = _where(located, item.spans[0] if item.spans else None)
            held.setdefault(uid, _incomplete(item.unit.title, code, message, uid, at))
            continue
        good = _propose(proposal, item, source, located, bad_set)
        cited += good
        for g in good:
            cited_by[g].append(uid)
    proposal.record = import_record.render(
        doc.format, str(doc.provenance["path"]), doc.content_hash, cited, cited_by
    )
    for uid, (code, message) in incomplete.items():  # items without a unit built
        if uid not in held:
            at = _where(located, result.item_spans.get(uid))
            held[uid] = _incomplete(uid, code, message, uid, at)
    proposal.not_imported = [
        NotImportedItem(n.element, n.what, _where(located, n.span)) for n in result.not_imported
    ] + [held[uid] for uid in sorted(held)]
    proposal.skipped = dict(sorted(result.skipped.items()))
    return proposal


def _propose(
    proposal: Proposal,
    item: Imported,
    source: ImportInput,
    located: dict[Span, Located],
    bad: set[Span],
) -> list[Located]:
    """One built unit into ``proposal`` (a span that does not hold its text raised as an
    item); the places it cites, none when it cannot be rendered."""
    uid = item.unit.id
    good = [located[s] for s in item.spans if s in located]
    for span in item.spans:
        if span in bad:
            proposal.raise_item(
                MISMATCH,
                f"the importer cites {source.shown(span.path)} bytes {span.start}-"
                f"{span.end}, which do not hold the text it gives; the span is not cited",
                uid,
            )
    first = good[0].where if good else "the source"
    try:
        markdown = render(item.unit)
    except (EvidenceError, ValueError, TypeError) as exc:
        proposal.raise_item(ReviewCode.INVALID_UNIT, f"unit from {first}: {exc}", uid)
        return []
    excerpts = list(dict.fromkeys(g.text for g in good))
    if renders_back(item.unit, markdown):
        # Known to parse back equal with no error: the typed unit is the parse's result.
        proposal.units.append(ProposedUnit(item.unit, excerpts, markdown))
    else:
        _add_markdown(proposal, markdown, excerpts, f"unit from {first}", uid, item.unit)
    return good


def _incomplete(element: str, code: str, message: str, uid: str, at: str | None) -> NotImportedItem:
    return NotImportedItem(element, INCOMPLETE[code], at, code, uid, message)
