"""What a power cut leaves on disk, in the manner of SQLite's crash VFS (test_vfs/crash).

``PowerLoss`` watches every managed operation of one process (the fsio hook)
and keeps two views of the workspace:

- the *volatile* one is the real file system (the page cache);
- the *durable* one is what an fsync made permanent: a file's bytes become
  durable when the file is fsynced, a folder's entries (creations, renames,
  removals) when the folder is fsynced.  Before that, the state at the start
  of the run is durable.

``crash()`` rewrites the tree to the durable view: every folder holds the
entries of its last fsync, so a rename or removal whose folder was not fsynced
is lost; every file holds its durable bytes, and bytes written since their
last fsync are ``kept`` (the disk happened to write them), ``dropped``, or
``garbled`` (part written, part noise).  The lock file is modelled too: its
holder note is never fsynced, so a cut can empty it -- the next holder then
believes the last one finished cleanly.  The derived cache is left as it is
(SQLite writes the index itself; the cache is rebuilt anyway).
"""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

SKIP = (".evidence-cache",)
DIR = "<dir>"


class PowerLoss:
    def __init__(self, root: Path, variant: str, seed: int) -> None:
        assert variant in ("kept", "dropped", "garbled"), variant
        self.root = os.path.abspath(root)
        self.variant = variant
        self.rng = random.Random(seed)
        self.next_id = 0
        self.names: dict[str, str] = {}  # volatile: path -> node id (files) or DIR
        self.durable_dirs: dict[str, dict[str, str]] = {}  # folder -> {name: id or DIR}
        self.durable_data: dict[str, bytes | None] = {}  # id -> bytes (None: never synced)
        self.pending_tmp: dict[str, str] = {}  # target path -> its temp file, at replace
        self._scan()

    # -- bookkeeping -----------------------------------------------------------------

    def _skipped(self, path: str) -> bool:
        rel = os.path.relpath(path, self.root)
        return rel.startswith("..") or rel.split(os.sep)[0] in SKIP

    def _new_id(self) -> str:
        self.next_id += 1
        return f"f{self.next_id}"

    def _scan(self) -> None:
        for folder, dirs, files in os.walk(self.root):
            entries: dict[str, str] = {}
            for name in dirs:
                self.names[os.path.join(folder, name)] = DIR
                entries[name] = DIR
            for name in files:
                path = os.path.join(folder, name)
                node = self._new_id()
                self.names[path] = node
                with open(path, "rb") as fh:
                    self.durable_data[node] = fh.read()
                entries[name] = node
            self.durable_dirs[folder] = entries

    def observe(self, op: str, path: str, phase: str) -> None:
        path = os.path.abspath(path)
        if self._skipped(path):
            return
        if phase == "before" and op == "replace":
            folder, name = os.path.split(path)
            temps = [p for p in self.names if os.path.dirname(p) == folder]
            temps = [p for p in temps if os.path.basename(p).startswith(f".{name}.")]
            if temps:
                self.pending_tmp[path] = temps[-1]
            return
        if phase != "after":
            return
        if op == "open" and path not in self.names:
            node = self._new_id()
            self.names[path] = node
            self.durable_data[node] = None
        elif op == "replace" and path in self.pending_tmp:
            self.names[path] = self.names.pop(self.pending_tmp.pop(path))
        elif op == "unlink":
            self.names.pop(path, None)
        elif op == "mkdir":
            self.names[path] = DIR
        elif op == "rmdir":
            self.names.pop(path, None)
        elif op == "fsync":
            self._synced(path)

    def _synced(self, path: str) -> None:
        if os.path.isdir(path):
            entries = {}
            for name in os.listdir(path):
                child = os.path.join(path, name)
                if child not in self.names:  # written without the seam (none expected)
                    node = self._new_id()
                    self.names[child] = DIR if os.path.isdir(child) else node
                    if not os.path.isdir(child):
                        self.durable_data[node] = _read(child)
                entries[name] = self.names[child]
            self.durable_dirs[path] = entries
        elif path in self.names and self.names[path] != DIR:
            self.durable_data[self.names[path]] = _read(path)

    # -- the crash -------------------------------------------------------------------

    def _volatile(self) -> dict[str, bytes]:
        """Current bytes of every node still reachable by a name."""
        out = {}
        for path, node in self.names.items():
            if node != DIR and os.path.isfile(path):
                out[node] = _read(path) or b""
        return out

    def _bytes(self, node: str, volatile: dict[str, bytes]) -> bytes:
        durable = self.durable_data.get(node)
        live = volatile.get(node, durable if durable is not None else b"")
        if durable == live:
            return live
        if self.variant == "kept":
            return live
        if self.variant == "dropped":
            return durable or b""
        # garbled: the unsynced part of the file is partly written, partly noise
        base = durable or b""
        common = 0
        while common < min(len(base), len(live)) and base[common] == live[common]:
            common += 1
        cut = self.rng.randint(common, max(common, len(live)))
        noise = bytes(self.rng.randrange(256) for _ in range(min(64, len(live) - cut)))
        return live[:cut] + noise

    def image(self) -> dict[str, bytes | None]:
        """Workspace-relative path -> bytes (None: a folder) of the durable view."""
        volatile = self._volatile()
        out: dict[str, bytes | None] = {}
        stack = [self.root]
        while stack:
            folder = stack.pop()
            for name, node in self.durable_dirs.get(folder, {}).items():
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, self.root)
                if rel.split(os.sep)[0] in SKIP:
                    continue
                if node == DIR:
                    out[rel] = None
                    stack.append(path)
                else:
                    out[rel] = self._bytes(node, volatile)
        return out

    def crash(self) -> dict[str, bytes | None]:
        """Rewrite the tree to the durable view (plain os calls: the hook is off)."""
        image = self.image()
        for name in os.listdir(self.root):
            if name in SKIP:
                continue
            path = os.path.join(self.root, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        for rel, data in sorted(image.items()):
            path = os.path.join(self.root, rel)
            if data is None:
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as fh:
                    fh.write(data)
        return image


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None
