"""Content-addressed blobs: ``objects/<2 hex>/<62 hex>`` named by the sha256 of their bytes."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.errors import IntegrityError

HEX64 = re.compile(r"[0-9a-f]{64}")


class ObjectStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, digest: str) -> Path:
        return Path(self.name_for(digest))

    def name_for(self, digest: str) -> str:
        """``path_for`` as a plain string: a first consolidate names 10,000 blobs."""
        if not HEX64.fullmatch(digest):
            raise ValueError(f"not a sha256 digest: {digest!r}")
        return f"{self.root}/{digest[:2]}/{digest[2:]}"

    def missing(self, digests: set[str]) -> set[str]:
        """The ``digests`` the store lacks, by one listing per folder they fall in, not one
        stat per digest (a first consolidate asks for every unit's blob)."""
        by_folder: dict[str, set[str]] = {}
        for digest in digests:
            if not HEX64.fullmatch(digest):  # refused, as path_for() refuses it
                raise ValueError(f"not a sha256 digest: {digest!r}")
            by_folder.setdefault(digest[:2], set()).add(digest[2:])
        out: set[str] = set()
        for sub, names in by_folder.items():
            try:
                held = set(os.listdir(self.root / sub))
            except (FileNotFoundError, NotADirectoryError):
                held = set()
            out.update(sub + name for name in names - held)
        return out

    def put(self, data: bytes, digest: str | None = None) -> str:
        """Store ``data`` once; objects are immutable, so an existing name is never rewritten."""
        digest = digest or hashlib.sha256(data).hexdigest()
        fsio.write_new(self.path_for(digest), data)
        return digest

    def get(self, digest: str) -> bytes:
        """The blob's bytes, checked against its name (a flipped byte is an integrity error)."""
        path = self.path_for(digest)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise IntegrityError(
                f"object {digest[:12]}… is missing from the archive", path=str(path)
            ) from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise IntegrityError(
                f"object {digest[:12]}… does not match its name (corrupted)", path=str(path)
            )
        return data

    def iter_digests(self) -> Iterator[tuple[str, Path]]:
        if not self.root.is_dir():
            return
        for sub in sorted(os.listdir(self.root)):
            folder = self.root / sub
            if not folder.is_dir():
                yield sub, folder
                continue
            for name in sorted(os.listdir(folder)):
                yield sub + name, folder / name
