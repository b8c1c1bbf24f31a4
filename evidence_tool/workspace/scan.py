"""Discovery and validation of curated files, workspace rules included (E108, E120)."""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from evidence_tool import fsio
from evidence_tool.errors import AvailabilityError, Diagnostic, EvidenceWarning
from evidence_tool.unit.fields import KINDS
from evidence_tool.unit.hashing import file_hash
from evidence_tool.workspace import curated
from evidence_tool.workspace._speed import gcpause, parallel
from evidence_tool.workspace._speed import statcache as sc
from evidence_tool.workspace._speed.statcache import StatCache
from evidence_tool.workspace.curated import CuratedFile, parse_file
from evidence_tool.workspace.layout import (
    NAME_RE,
    Layout,
    enclosing_workspace,
    nearest_workspace,
)
from evidence_tool.workspace.unitnames import not_a_unit

if TYPE_CHECKING:
    from evidence_tool.unit.model import Unit


@dataclass
class ValidationReport:
    files: list[CuratedFile] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[EvidenceWarning] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def units(self) -> list[Unit]:
        return [f.unit for f in self.files if f.unit is not None]

    def summary(self) -> dict[str, object]:
        bad = {d.path for d in self.errors}
        valid = [f for f in self.files if f.valid and f.rel not in bad]
        by_kind = Counter(f.kind or "" for f in valid)
        return {
            "files": len(self.files),
            "valid": len(valid),
            "invalid": len(self.files) - len(valid),
            "by_kind": dict(sorted(by_kind.items())),
        }


def _walk_md(
    top: str | Path, layout: Layout | None, *, curated: bool = True
) -> Iterator[tuple[str, Diagnostic | None]]:
    """Markdown files under ``top`` in sorted order; links that leave the workspace are
    refused.  In a curated tree (``curated``), every other file is an E108 finding."""
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            yield folder, Diagnostic("E109", f"cannot read folder: {exc.strerror}")
            continue
        subdirs = []
        for entry in entries:
            path = entry.path  # plain strings: pathlib costs more than the rest of a no-op scan
            if entry.is_symlink() and layout is not None and not layout.inside(path):
                yield path, _link_outside()
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:  # a link loop: not a folder; reading it names what is wrong
                is_dir = False
            if is_dir:
                subdirs.append(path)
            elif entry.name.endswith(".md"):
                yield path, None
            elif curated and (problem := not_a_unit(entry.name)) is not None:
                yield path, problem
        stack.extend(reversed(subdirs))


def stray_files(layout: Layout) -> list[Diagnostic]:
    """The E108 findings of the curated tree's files that are not read as units (wrong
    name, link outside), without reading any unit: for ``verify``."""
    prefix = len(str(layout.root)) + 1
    if not os.path.isdir(layout.curated):
        return []
    return [
        problem.with_path(path[prefix:])
        for path, problem in _walk_md(layout.curated, layout)
        if problem is not None and problem.code == "E108"
    ]


def left_temp_files(layout: Layout) -> list[Diagnostic]:
    """E108 for each temp file of an atomic write (``.NAME.<12 hex>.tmp``) in the curated
    tree or at the workspace root: the lock-free writers (``fmt``, ``workspace new``) leave
    one when they are killed between the write and the rename, and no locked run sweeps
    there; one younger than ``TEMP_GRACE_S`` may be a write in flight and is not named.
    For ``verify``; the generated ``.gitignore`` keeps them out of ``git add``."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        found += [e.path for e in os.scandir(layout.root) if fsio.TEMP_NAME.fullmatch(e.name)]
    for dirpath, _dirs, names in os.walk(layout.curated):  # follows no link
        found += [os.path.join(dirpath, n) for n in names if fsio.TEMP_NAME.fullmatch(n)]
    found = [path for path in found if _stale(path)]
    prefix = len(str(layout.root)) + 1
    return [
        Diagnostic(
            "E108",
            "a temp file left by a write that was killed (evidence fmt, workspace new); "
            "nothing reads it: delete it",
            path[prefix:],
        )
        for path in sorted(found)
    ]


# A write in flight renames its temp file within moments; one this old was left by a
# write that was killed (a reader racing a live save must not call its file debris).
TEMP_GRACE_S = 60.0


def _stale(path: str) -> bool:
    try:
        return time.time() - os.lstat(path).st_mtime > TEMP_GRACE_S
    except OSError:  # renamed away meanwhile: the write finished
        return False


def _in_curated(folder: Path) -> bool:
    """The folder is, or lies in, some workspace's ``evidence/curated/``."""
    parts = Path(os.path.abspath(folder)).parts
    return any(parts[i : i + 2] == ("evidence", "curated") for i in range(len(parts) - 1))


def _link_outside(path: str | None = None) -> Diagnostic:
    return Diagnostic(
        "E108",
        "a symbolic link pointing outside the workspace is refused; replace it with the "
        "file itself",
        path,
    )


def _layout_problem(f: CuratedFile) -> Diagnostic | None:
    rel = f.rel.split("/")[2:]  # below evidence/curated/
    if len(rel) != 2 or rel[0] not in KINDS:
        return Diagnostic(
            "E108",
            "curated units live at evidence/curated/<kind>/<name>.md "
            f"with <kind> one of {', '.join(KINDS)}",
        )
    stem = rel[1][:-3]
    if not NAME_RE.fullmatch(stem):
        return Diagnostic(
            "E108", f"file name {rel[1]!r} must match [a-z0-9][a-z0-9._-]*.md; rename the file"
        )
    if f.valid and f.kind != rel[0]:
        return Diagnostic(
            "E108",
            f"kind '{f.kind}' does not match the folder '{rel[0]}'; "
            f"move the file to evidence/curated/{f.kind}/ or fix 'kind'",
            line=f.key_line("kind"),
            column=1,
            unit_id=f.unit_id,
        )
    return None


def _check_ids(files: Iterable[CuratedFile], report: ValidationReport) -> None:
    first: dict[str, CuratedFile] = {}
    for f in files:
        uid = f.cached[sc.UNIT_ID] if f.cached is not None else f.unit_id
        if uid is None:
            continue
        if uid in first:
            report.errors.append(
                Diagnostic(
                    "E120",
                    f"id '{uid}' is already used by {first[uid].rel}; give this unit a new id",
                    f.rel,
                    f.key_line("id"),
                    1,
                    uid,
                )
            )
        else:
            first[uid] = f


Progress = Callable[[str, int, int], None]  # (label, done, total)


@gcpause.paused()
def scan_curated(
    layout: Layout,
    *,
    stat_cache: StatCache | None = None,
    progress: Progress | None = None,
    check_ids: bool = True,
) -> ValidationReport:
    """Read and validate every curated file with the workspace rules (``check_ids``:
    E120 too; validate_paths checks ids once over every path it was given).

    A missing or unreadable curated tree is an availability error (E601), never
    an empty workspace: callers must not read it as "all units deleted".
    """
    _require_curated(layout)
    report = ValidationReport()
    prefix = len(str(layout.root)) + 1
    found = list(_walk_md(layout.curated, layout))
    slots, todo, racy = _recognized(found, prefix, stat_cache)
    # A racily clean file is confirmed by its hash (_cached_file) and parsed only if its
    # bytes changed: sending it to the parse workers would parse the whole workspace
    # again after `init` or a consolidation of files written a moment before.
    parsed = parallel.parse_many(
        [(path, rel) for _, path, rel, problem, _ in todo if not problem and path not in racy],
        progress,
        stat_cache is not None,
    )
    for n, (slot, path, rel, problem, st_) in enumerate(todo):
        if progress and not parsed and n % 64 == 0:
            progress("validating", n, len(todo))
        if problem is not None:
            report.errors.append(problem.with_path(rel))
            continue
        slots[slot] = _checked(layout, path, rel, st_, parsed.get(path), stat_cache, report)
    report.files = [f for f in slots if f is not None]
    if progress:
        progress("validating", len(found), len(found))
    if check_ids:
        _check_ids(report.files, report)
    report.errors.sort(key=Diagnostic.sort_key)
    return report


def _require_curated(layout: Layout) -> None:
    """E601 unless the curated tree is a readable folder inside the workspace."""
    layout.require_contained()
    curated, rel = layout.curated, layout.rel(layout.curated)
    try:
        st = os.stat(curated)
        readable = stat.S_ISDIR(st.st_mode) and os.access(curated, os.R_OK | os.X_OK)
        problem = None if readable else "is not a readable folder"
    except OSError as exc:
        problem = f"is unavailable ({exc.strerror})"
    if problem is not None:
        raise AvailabilityError(f"the curated tree {rel}/ {problem}", code="E601", path=rel)


_Todo = tuple[int, str, str, Diagnostic | None, os.stat_result | None]


def _recognized(
    found: list[tuple[str, Diagnostic | None]], prefix: int, stat_cache: StatCache | None
) -> tuple[list[CuratedFile | None], list[_Todo], set[str]]:
    """One slot per found file, in walk order: files the stat cache recognizes are filled
    now (never read); the rest go to ``todo`` (slot, path, rel, problem, stat) to parse, on
    both cores when many.  ``racy``: recorded, stat unchanged, but too recent to trust."""
    slots: list[CuratedFile | None] = []
    todo: list[_Todo] = []
    racy: set[str] = set()
    for path, problem in found:
        rel = path[prefix:]
        st_ = None
        if problem is None and stat_cache is not None:
            try:
                st_ = os.stat(path)
            except OSError:
                pass
            else:
                entry = stat_cache.trusted(rel, st_)
                if entry is not None:
                    slots.append(CuratedFile(rel, path, cached=entry))
                    continue
                if stat_cache.lookup(rel, st_)[0] is not None:
                    racy.add(path)
        todo.append((len(slots), path, rel, problem, st_))
        slots.append(None)
    return slots, todo, racy


def _checked(
    layout: Layout,
    path: str,
    rel: str,
    st_: os.stat_result | None,
    parsed: CuratedFile | None,
    stat_cache: StatCache | None,
    report: ValidationReport,
) -> CuratedFile:
    """The file read (or confirmed by the cache), its findings and layout rule reported."""
    if stat_cache is not None:
        f = _cached_file(path, rel, stat_cache, st_, parsed)
    else:
        f = parsed or parse_file(path, rel)
    if f.cached is None:
        report.errors.extend(f.errors)
        report.warnings.extend(f.warnings)
    # A cache hit passed the layout rules when it was recorded (its path is its key).
    layout_problem = None if f.cached else _layout_problem(f)
    if layout_problem is not None:
        report.errors.append(layout_problem.with_path(rel))
        if stat_cache is not None:
            stat_cache.fresh.pop(rel, None)
    return f


def _cached_file(
    path: str,
    rel: str,
    cache: StatCache,
    st: os.stat_result | None = None,
    parsed: CuratedFile | None = None,
) -> CuratedFile:
    """The file from the stat cache when unchanged; else read, parse and record it."""
    if st is None:
        try:
            st = os.stat(path)
        except OSError:
            return parsed or parse_file(path, rel)
    entry, trusted = cache.lookup(rel, st)
    if entry is not None and trusted:
        cache.keep(rel, entry)
        return CuratedFile(rel, path, cached=entry)
    if entry is not None:
        data = parsed.raw if parsed is not None else curated.read_file(path)
        if isinstance(data, bytes) and file_hash(data) == entry[sc.FILE_HASH]:
            # Racily clean but confirmed by its bytes: keep the recorded parse.
            cache.keep(rel, entry, confirmed=True)
            return CuratedFile(rel, path, raw=data, cached=entry)
    f = parsed or parse_file(path, rel)
    if f.valid and not f.warnings:
        uid, kind, digest = f.unit_id, f.kind, f.content_hash
        assert uid is not None and kind is not None and digest is not None
        cache.record(
            rel, st, (f.file_hash, uid, kind, digest, f.key_line("id"), f.key_line("kind"))
        )
    return f


def validate_workspace(
    root: str | os.PathLike[str], progress: Progress | None = None
) -> ValidationReport:
    """Every curated file with the workspace rules, and a warning (W108) for each unit
    saved where no unit is read."""
    from evidence_tool.workspace.misplaced import misplaced_units

    layout = Layout.at(root)
    report = scan_curated(layout, progress=progress)
    report.warnings.extend(misplaced_units(layout))
    return report


def _layout_in(workspace: Layout | None, f: CuratedFile) -> list[Diagnostic]:
    """The layout rules (kind folder, file name, kind) for a file given by path that lies
    in a workspace's curated tree: ``validate evidence/curated/...`` flags what the
    workspace's own validate flags."""
    if workspace is None:
        return []
    real = os.path.realpath(f.path)
    curated = os.path.realpath(workspace.curated)
    if not real.startswith(curated + os.sep):
        return []
    rel = "evidence/curated/" + os.path.relpath(real, curated).replace(os.sep, "/")
    problem = _layout_problem(replace(f, rel=rel))
    return [] if problem is None else [problem.with_path(f.rel)]


class _Taken:
    """The files (and findings) ``validate_paths`` took, each by its entry in its workspace
    (the workspace's folder as the file system knows it, and the path below it as its own
    walk spells it: a unit under a folder link inside the tree is another entry than its
    target, as in the workspace's validate; a link from outside to a folder in it is that
    folder) or, outside any workspace, by its name in its folder; ``..`` is resolved as the
    file system resolves it; and the given path that took it."""

    def __init__(self) -> None:
        self.owner: dict[tuple[object, str], int] = {}
        self.ids: dict[str, object] = {}  # a walk meets each folder many times
        self.places: dict[str, tuple[str | None, str]] = {}  # folder: workspace, folder in it
        self.given = 0  # the given path being read

    def __call__(self, path: str | os.PathLike[str]) -> bool:
        """True unless another given path took ``path`` already.  Within one given path
        the walk meets each entry once; a folder linked inside the tree gives other
        entries, as it does to the workspace's validate."""
        return self.owner.setdefault(self.key(path), self.given) == self.given

    def key(self, path: str | os.PathLike[str]) -> tuple[object, str]:
        full = os.path.join(os.getcwd(), path)
        if ".." in full.split(os.sep):  # abspath would drop ``lnk/..`` by its spelling
            full = _physical_dots(full)
        folder, name = os.path.split(os.path.normpath(full))
        if folder not in self.places:
            found = nearest_workspace(folder, curated_marks=True)  # an ancestor, as spelled
            seen = folder
            if found is None:  # a link from outside to a folder in a workspace
                seen = os.path.realpath(folder)
                found = nearest_workspace(seen, curated_marks=True)
            root = None if found is None else str(found).rstrip(os.sep)
            self.places[folder] = (root, seen)
        root, seen = self.places[folder]
        if root is None:
            return self.identity(folder), name
        rel = os.path.join(seen, name)[len(root) + 1 :].replace(os.sep, "/")
        return self.identity(root or os.sep), rel

    def identity(self, folder: str) -> object:
        where = self.ids.get(folder)
        if where is None:
            try:
                st = os.stat(folder)
                where = self.ids[folder] = (st.st_dev, st.st_ino)
            except OSError:  # a folder that went away: its resolved path then
                where = self.ids[folder] = os.path.realpath(folder)
        return where


def _physical_dots(full: str) -> str:
    """``full`` with each ``..`` taken as the file system takes it (the parent of where the
    links before it lead) and every other part kept as spelled."""
    out = os.sep
    for part in full.split(os.sep):
        if part == "..":
            out = os.path.realpath(os.path.join(out, ".."))
        elif part and part != ".":
            out = os.path.join(out, part)
    return out


def validate_paths(
    paths: Iterable[str | os.PathLike[str]], progress: Progress | None = None
) -> ValidationReport:
    """Validate files and folders; a folder that is a workspace root means its curated tree.

    Each file is validated once however the paths spell it or overlap (``.``, its absolute
    form, a link to the workspace, a folder inside another given one), so each finding is
    reported once and one duplicate id is one E120.  Inside a workspace its managed folders
    must stay inside it (E108) and the walk never follows a link out of it; outside any
    workspace, out of the folder named."""
    report = ValidationReport()
    first_time = _Taken()

    def take(
        f: CuratedFile, errors: Iterable[Diagnostic], warnings: Iterable[EvidenceWarning]
    ) -> None:
        report.files.append(f)
        report.errors.extend(errors)
        report.warnings.extend(warnings)

    for n, given in enumerate(paths):
        first_time.given = n
        p = Path(given)
        workspace = enclosing_workspace(p)
        if workspace is not None:
            workspace.require_contained()
            if not workspace.inside(p):
                report.errors.append(_link_outside(str(p)))
                continue
        if p.is_dir():
            if (p / "evidence" / "curated").is_dir():
                _take_workspace(p, progress, first_time, report)
                continue
            for path, problem in _walk_md(p, workspace or Layout.at(p), curated=_in_curated(p)):
                if not first_time(path):
                    continue
                if problem is not None:
                    report.errors.append(problem.with_path(str(path)))
                    continue
                f = parse_file(path, str(path))
                take(f, [*f.result.errors, *_layout_in(workspace, f)], f.result.warnings)
        elif p.exists() or curated.is_link_loop(p):  # a loop is its file's finding, E118
            if first_time(p):
                f = parse_file(p, str(p))
                take(f, [*f.result.errors, *_layout_in(workspace, f)], f.result.warnings)
        else:
            report.errors.append(Diagnostic("E603", "no such file or folder", str(p)))
    _check_ids(report.files, report)
    # dict.fromkeys, not set: findings that share a sort key keep the parser's order in
    # every process (a set's order follows the hash seed).
    report.errors = sorted(dict.fromkeys(report.errors), key=Diagnostic.sort_key)
    return report


def _take_workspace(
    base: Path,
    progress: Progress | None,
    first_time: Callable[[str | os.PathLike[str]], bool],
    report: ValidationReport,
) -> None:
    """The curated tree of the workspace at ``base``, its files and findings under the
    paths as the user spelled them; files already taken from another path are skipped."""
    sub = scan_curated(Layout.at(base), progress=progress, check_ids=False)
    files = {f.rel for f in sub.files}
    taken = {f.rel for f in sub.files if first_time(f.location)}
    report.files += [replace(f, rel=str(base / f.rel)) for f in sub.files if f.rel in taken]
    # Findings of what is not a parsed file (a stray name, an unreadable folder), once each.
    others = {d.path for d in sub.errors} - files
    fresh = taken | {rel for rel in others if rel is None or first_time(base / rel)}

    def shown(rel: str | None) -> str | None:  # as the user gave it, not workspace-relative
        return str(base / rel) if rel else None

    report.errors += [d.with_path(shown(d.path)) for d in sub.errors if d.path in fresh]
    # A file taken from another given path brought its warnings with it.
    report.warnings += [
        EvidenceWarning(w.message, shown(w.path), w.line, w.code)
        for w in sub.warnings
        if w.path is None or w.path in fresh
    ]
    from evidence_tool.workspace.misplaced import misplaced_units

    for w in misplaced_units(Layout.at(base)):
        if w.path is not None and first_time(base / w.path):
            report.warnings.append(EvidenceWarning(w.message, str(base / w.path), w.line, w.code))
