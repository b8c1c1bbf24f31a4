"""The stat cache is safe: an edit is seen even when size and mtime are kept (SPEC.md 12)."""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import time
from pathlib import Path
from typing import Any

import pytest

from evidence_tool import fsio
from evidence_tool.archive.local import LocalEvidenceArchive
from evidence_tool.workspace._speed import statcache
from evidence_tool.workspace._speed.statcache import RACY_NS, StatCache
from evidence_tool.workspace.layout import Layout
from evidence_tool.workspace.scan import scan_curated

DRG = "evidence/curated/glossary/drg.md"


def _age_everything(root: Path, seconds: float = 10.0) -> None:
    """Make every curated file older than the cache's racy window."""
    past = time.time() - seconds
    for path in (root / "evidence" / "curated").rglob("*.md"):
        os.utime(path, (past, past))


def _consolidate(root: Path) -> object:
    return LocalEvidenceArchive(root).consolidate("tester")


def _same_size_edit(path: Path) -> bytes:
    """Change one visible letter, keeping the size and the mtime (like ``touch -d``)."""
    st = os.stat(path)
    data = path.read_bytes()
    new = data.replace(b"DRG", b"DRX", 1)
    assert new != data and len(new) == len(data)
    path.write_bytes(new)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    return new


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every curated file the scan reads."""
    import evidence_tool.workspace.curated as curated

    seen: list[str] = []
    real = curated.read_file

    def spy(path: str | Path) -> object:
        seen.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(curated, "read_file", spy)
    return seen


def test_a_no_op_consolidate_reads_no_unchanged_file(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _age_everything(workspace)
    _consolidate(workspace)  # records the cache
    reads = _reads(monkeypatch)
    result = _consolidate(workspace)
    assert result.status in ("unchanged", "reindexed") or result.changes["unchanged"]
    assert reads == [], f"unchanged files were read: {reads[:3]}"


def test_an_incremental_consolidate_reads_only_the_changed_file(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _age_everything(workspace)
    _consolidate(workspace)
    target = workspace / DRG
    target.write_bytes(target.read_bytes().replace(b"DRG", b"DRG grouping", 1))
    reads = _reads(monkeypatch)
    result = _consolidate(workspace)
    assert result.changes["modified"] == ["evidence:clinical:drg"]
    assert [Path(p).name for p in reads] == ["drg.md"]


def test_same_size_same_mtime_edit_is_detected_through_ctime(workspace: Path) -> None:
    _age_everything(workspace)
    _consolidate(workspace)
    time.sleep(0.01)  # ctime moves on with the write below
    _same_size_edit(workspace / DRG)
    result = _consolidate(workspace)
    assert result.changes["modified"] == ["evidence:clinical:drg"]
    snap = LocalEvidenceArchive(workspace).newest_snapshot()
    assert snap is not None and b"DRX" in snap.unit_bytes(snap.entry("evidence:clinical:drg"))


def test_a_replaced_file_is_detected_through_its_inode(workspace: Path) -> None:
    _age_everything(workspace)
    _consolidate(workspace)
    target = workspace / DRG
    st = os.stat(target)
    new = target.read_bytes().replace(b"DRG", b"DRX", 1)
    tmp = target.with_name("drg.md.new")
    tmp.write_bytes(new)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, target)  # what editors that save by rename do
    assert os.stat(target).st_ino != st.st_ino
    assert _consolidate(workspace).changes["modified"] == ["evidence:clinical:drg"]


def test_an_entry_with_every_stat_field_forged_equal_is_still_caught_when_racy(
    workspace: Path,
) -> None:
    """A file written within the cache's second is re-hashed, as Git does for racily
    clean index entries: forge a cache entry whose stat matches but whose hash does not."""
    layout = Layout.at(workspace)
    cache = StatCache.load(layout)
    scan_curated(layout, stat_cache=cache)
    cache.save()
    _, entries = statcache.decode((layout.cache / statcache.NAME).read_bytes())
    entry = list(entries[DRG])
    entry[statcache.FILE_HASH] = "0" * 64  # the recorded file hash no longer matches the bytes
    entries[DRG] = tuple(entry)  # type: ignore[assignment]
    stamp = os.stat(workspace / DRG).st_mtime_ns + RACY_NS // 2
    fsio.write_atomic(layout.cache / statcache.NAME, statcache.encode(stamp, entries))
    again = StatCache.load(layout)
    report = scan_curated(layout, stat_cache=again)
    drg = next(f for f in report.files if f.rel == DRG)
    assert drg.cached is None, "a racily clean entry must be confirmed by its bytes"
    assert drg.file_hash != "0" * 64


def test_an_old_entry_is_trusted_without_reading(workspace: Path) -> None:
    _age_everything(workspace)
    layout = Layout.at(workspace)
    cache = StatCache.load(layout)
    scan_curated(layout, stat_cache=cache)
    cache.save()
    report = scan_curated(layout, stat_cache=StatCache.load(layout))
    assert all(f.cached is not None and f.raw is None for f in report.files)


def test_a_cache_from_another_version_is_ignored(workspace: Path) -> None:
    layout = Layout.at(workspace)
    cache = StatCache.load(layout)
    scan_curated(layout, stat_cache=cache)
    cache.save()
    path = layout.cache / statcache.NAME
    assert StatCache.load(layout).entries
    _, _, body = path.read_bytes().partition(b"\n")
    line, _, payload = body.partition(b"\n")
    for key, other in (("version", "0.0.0-other"), ("python", "2.7"), ("format", 1)):
        header = json.loads(line)
        header[key] = other
        forged = json.dumps(header).encode() + b"\n" + payload
        # Even with a digest that matches: written by another version means not ours.
        path.write_bytes(hashlib.sha256(forged).hexdigest().encode() + b"\n" + forged)
        assert StatCache.load(layout).entries == {}, key


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # torn write
        lambda data: data[:-40] + bytes([data[-40] ^ 1]) + data[-39:],  # one flipped bit
        lambda data: b"",
        lambda data: b"\x00" * 64,
        lambda data: b"{}\n" + data.partition(b"\n")[2],
        lambda data: b"[1]\n",
        lambda data: b"not json\n" + data,
    ],
    ids=["torn", "bit-flip", "empty", "zeros", "no-header-fields", "header-not-object", "junk"],
)
def test_a_damaged_cache_is_ignored_and_rebuilt(workspace: Path, damage: Any) -> None:
    """The payload is unmarshalled only once its sha256 matches: never a crash, never trusted."""
    _age_everything(workspace)
    _consolidate(workspace)
    path = workspace / ".evidence-cache" / statcache.NAME
    path.write_bytes(damage(path.read_bytes()))
    layout = Layout.at(workspace)
    assert StatCache.load(layout).entries == {}
    assert _consolidate(workspace).status in ("unchanged", "reindexed", "pending_activation")
    assert StatCache.load(layout).entries, "the next consolidate rebuilds the cache"


def test_a_forged_payload_with_a_matching_digest_but_wrong_shape_is_ignored(
    workspace: Path,
) -> None:
    layout = Layout.at(workspace)
    cache = StatCache.load(layout)
    scan_curated(layout, stat_cache=cache)
    cache.save()
    path = layout.cache / statcache.NAME
    _, _, body = path.read_bytes().partition(b"\n")
    line, _, _ = body.partition(b"\n")
    for shape in ({"a.md": 1}, {"a.md": (1, 2)}, [1, 2]):
        forged = line + b"\n" + marshal.dumps(shape)
        path.write_bytes(hashlib.sha256(forged).hexdigest().encode() + b"\n" + forged)
        assert StatCache.load(layout).entries == {}, shape


def test_a_damaged_stamp_is_never_trusted(workspace: Path) -> None:
    """The stamp decides which entries are racily clean: the digest covers it too, and a
    stamp that is not an integer (1e999 overflowed int() once) is refused, not a crash."""
    _age_everything(workspace)
    _consolidate(workspace)
    path = workspace / ".evidence-cache" / statcache.NAME
    data = path.read_bytes()
    digest, _, body = data.partition(b"\n")
    line, _, payload = body.partition(b"\n")
    header = json.loads(line)
    raised = json.dumps({**header, "stamp_ns": header["stamp_ns"] * 10}).encode()
    path.write_bytes(digest + b"\n" + raised + b"\n" + payload)  # digest no longer matches
    assert StatCache.load(Layout.at(workspace)).entries == {}
    for stamp in (b"1e999", b'"1"', b"null", b"1.5"):
        forged = line.replace(str(header["stamp_ns"]).encode(), stamp) + b"\n" + payload
        path.write_bytes(hashlib.sha256(forged).hexdigest().encode() + b"\n" + forged)
        assert StatCache.load(Layout.at(workspace)).entries == {}, stamp
    assert _consolidate(workspace)


def test_invalid_files_are_never_cached(workspace: Path) -> None:
    bad = workspace / "evidence/curated/domain/broken.md"
    bad.write_text("---\nschema_version: 4\n---\n\n# x\n", encoding="utf-8")
    layout = Layout.at(workspace)
    cache = StatCache.load(layout)
    report = scan_curated(layout, stat_cache=cache)
    assert any(d.path == "evidence/curated/domain/broken.md" for d in report.errors)
    assert "evidence/curated/domain/broken.md" not in cache.fresh
    again = scan_curated(layout, stat_cache=cache)
    assert any(d.path == "evidence/curated/domain/broken.md" for d in again.errors)


def test_dry_run_writes_no_cache(workspace: Path) -> None:
    LocalEvidenceArchive(workspace).consolidate("tester", dry_run=True)
    assert not (workspace / ".evidence-cache" / statcache.NAME).exists()


def test_strict_verify_reads_every_file_despite_a_warm_cache(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--strict takes no timestamp's word for a file; plain reading commands may."""
    from evidence_tool.gitflow.strict import verify_strict

    _age_everything(workspace)
    _consolidate(workspace)
    curated = sorted((workspace / "evidence" / "curated").rglob("*.md"))
    reads = _reads(monkeypatch)
    LocalEvidenceArchive(workspace).scan()
    assert reads == [], "a plain scan trusts the stat cache"
    verify_strict(LocalEvidenceArchive(workspace))
    assert sorted(set(reads)) == [os.fspath(p) for p in curated]


def test_init_leaves_a_warm_stat_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first consolidate after 'init' reads no file that init already read (issue 20)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench.generate import generate

    root = generate(33, tmp_path / "fresh", seed=11)
    _age_everything(root, 30.0)
    result = LocalEvidenceArchive(root).initialize("tester")
    assert result.status == "initialized"
    reads = _reads(monkeypatch)
    after = _consolidate(root)
    unchanged = after.changes["unchanged"]  # type: ignore[attr-defined]
    assert unchanged == 33, after.changes  # type: ignore[attr-defined]
    assert reads == [], f"{len(reads)} files read again after init, e.g. {reads[:2]}"
    assert len(StatCache.load(Layout.at(root)).entries) == 33
