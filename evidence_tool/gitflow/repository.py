"""The Git repository holding a workspace, read through gitpython without writing anything.

Every command runs with ``GIT_OPTIONAL_LOCKS=0``: a plain ``git status`` may
otherwise refresh and rewrite ``.git/index``, and this package never writes
to the operator's repository.  Paths given to Git are ``:(literal)`` pathspecs
(a workspace folder named ``[draft]`` is not a glob); paths read back use
``-z`` (no C-quoting of spaces, quotes or non-ASCII letters).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evidence_tool.errors import AvailabilityError

_ENV = {"GIT_OPTIONAL_LOCKS": "0"}
_UNMERGED = {"DD", "AU", "UD", "UA", "DU", "AA", "UU"}


@dataclass(frozen=True)
class FileStatus:
    """One path of ``git status --porcelain=v1``: index (X) and worktree (Y) letters."""

    rel: str  # workspace-relative
    index: str  # ' ' unchanged, M A D T (C R with renames), '?' untracked
    worktree: str

    @property
    def untracked(self) -> bool:
        """The working file is not in the index (it may still be a staged deletion: "D?")."""
        return self.worktree == "?"

    @property
    def unmerged(self) -> bool:
        return self.index + self.worktree in _UNMERGED

    @property
    def staged(self) -> bool:
        """The index differs from HEAD for this path."""
        return not self.unmerged and self.index not in " ?!"

    @property
    def unstaged(self) -> bool:
        """The working file differs from the index (modified, deleted or type changed)."""
        return not self.unmerged and self.worktree not in " ?!"


@dataclass(frozen=True)
class Unavailable:
    """Why there is no Git view of the workspace (a note, not an error)."""

    reason: str

    @property
    def note(self) -> str:
        return f"{self.reason}; Git checks and Git state are skipped"


@dataclass
class EvidenceRepo:
    """A workspace inside a Git worktree: ``prefix`` is the workspace root relative to ``top``."""

    repo: Any  # git.Repo
    top: Path
    prefix: str

    # -- paths ---------------------------------------------------------------
    def to_repo(self, rel: str) -> str:
        """Repository-relative path of a workspace-relative path (``../dbt`` beside the
        workspace included: an import input the descriptor names)."""
        joined = f"{self.prefix}/{rel}" if self.prefix else rel
        return posixpath.normpath(joined) if ".." in rel.split("/") else joined

    def to_workspace(self, repo_rel: str) -> str | None:
        if not self.prefix:
            return repo_rel
        head = self.prefix + "/"
        if repo_rel.startswith(head):
            return repo_rel[len(head) :]
        # Beside the workspace: only paths asked for reach here (every query names its
        # pathspecs), so an import input outside the prefix is shown as '../...'.
        return posixpath.relpath(repo_rel, self.prefix)

    def pathspecs(self, rels: Iterable[str]) -> list[str]:
        return [":(literal)" + self.to_repo(rel) for rel in rels]

    def _run(self, command: str, *args: str) -> bytes:
        """Raw stdout of a read-only git command (gitpython's configured executable)."""
        run = getattr(self.repo.git, command.replace("-", "_"))
        return bytes(run(*args, env=_ENV, stdout_as_string=False, strip_newline_in_stdout=False))

    def _paths(self, out: bytes, *, heads: bool) -> Iterator[tuple[str, str]]:
        """(record head, workspace-relative path) of NUL-separated ``[head TAB] path`` records."""
        for record in out.split(b"\0"):
            if not record:
                continue
            text = os.fsdecode(record)
            head, _, path = text.partition("\t") if heads else ("", "", text)
            rel = self.to_workspace(path)
            if rel is not None:
                yield head, rel

    # -- reading -------------------------------------------------------------
    @property
    def head(self) -> str | None:
        """The commit HEAD names, or None in a repository without commits."""
        try:
            return str(self.repo.head.commit.hexsha)
        except ValueError:
            return None

    @property
    def branch(self) -> str | None:
        """The current branch, or None on a detached HEAD."""
        try:
            return str(self.repo.active_branch.name)
        except TypeError:
            return None

    def status(self, rels: Iterable[str]) -> dict[str, FileStatus]:
        """Staged, unstaged and untracked files under ``rels`` (ignored files are left out)."""
        out = self._run(
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--ignore-submodules=all",
            "--",
            *self.pathspecs(rels),
        )
        found: dict[str, FileStatus] = {}
        for record in out.split(b"\0"):
            if len(record) < 4:
                continue
            text = os.fsdecode(record)
            rel = self.to_workspace(text[3:])
            if rel is None:
                continue
            x, y = text[0], text[1]
            old = found.get(rel)
            if old is not None:  # "D " and "??" for a path deleted from the index and recreated
                x = old.index if old.index != "?" else x
                y = "?" if "?" in (old.worktree, y) else y
            found[rel] = FileStatus(rel, x, y)
        return found

    def index_blobs(self, rels: Iterable[str]) -> dict[str, str]:
        """Workspace-relative path -> blob id of every merged index entry under ``rels``."""
        out = self._run("ls-files", "--stage", "-z", "--", *self.pathspecs(rels))
        blobs: dict[str, str] = {}
        for head, rel in self._paths(out, heads=True):
            mode, sha, stage = head.split(" ")
            if stage == "0" and mode != "160000":
                blobs[rel] = sha
        return blobs

    def blob(self, sha: str) -> bytes:
        return bytes(self.repo.odb.stream(bytes.fromhex(sha)).read())

    def head_blob(self, rel: str) -> bytes | None:
        """The bytes HEAD records for a workspace-relative path, or None."""
        if self.head is None:
            return None
        out = self._run("ls-tree", "-z", "HEAD", "--", self.pathspecs([rel])[0])
        for head, _ in self._paths(out, heads=True):
            _mode, kind, sha = head.split(" ")
            if kind == "blob":
                return self.blob(sha)
        return None

    def tracked(self, rels: Iterable[str]) -> list[str]:
        return self._listed(rels)

    def ignored(self, rels: Iterable[str]) -> list[str]:
        """Untracked files under ``rels`` that Git ignores (a commit would silently miss them)."""
        return self._listed(rels, "--others", "--ignored", "--exclude-standard")

    def _listed(self, rels: Iterable[str], *flags: str) -> list[str]:
        out = self._run("ls-files", "-z", *flags, "--", *self.pathspecs(rels))
        return sorted(rel for _, rel in self._paths(out, heads=False))


@contextmanager
def open_repo(root: str | os.PathLike[str]) -> Iterator[EvidenceRepo | Unavailable]:
    """The repository whose worktree holds ``root``, or why there is none."""
    try:
        import git
    except ImportError as exc:  # gitpython refuses to import without a git executable
        yield Unavailable(f"Git is not available ({exc})")
        return
    real = os.path.realpath(root)
    try:
        repo = git.Repo(real, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        yield Unavailable(f"{root} is not inside a Git worktree")
        return
    try:
        if repo.bare or repo.working_tree_dir is None:
            yield Unavailable(f"{root} is inside a bare Git repository")
            return
        git_dir = os.path.realpath(repo.git_dir)
        if _inside(real, git_dir):
            yield Unavailable(f"{root} is inside the Git folder {git_dir}, not its worktree")
            return
        top = Path(os.path.realpath(repo.working_tree_dir))
        prefix = Path(os.path.relpath(real, top)).as_posix()
        if prefix == ".." or prefix.startswith("../"):
            yield Unavailable(f"{root} is outside the worktree of {top}")
            return
        yield EvidenceRepo(repo, top, "" if prefix == "." else prefix)
    finally:
        repo.close()


def require_worktree(root: str | os.PathLike[str], why: str) -> None:
    """Raise E602 (exit 6) unless ``root`` lies in the worktree of a non-bare repository
    and Git is available; ``why`` says what needs the worktree and how to get one."""
    with open_repo(root) as repo:
        if isinstance(repo, Unavailable):
            raise not_a_worktree(repo, root, why)


def not_a_worktree(repo: Unavailable, root: str | os.PathLike[str], why: str) -> AvailabilityError:
    """E602 for a command that cannot run without the worktree (``why`` says which, and
    how to get one)."""
    return AvailabilityError(f"{repo.reason}; {why}", code="E602", path=str(root))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
