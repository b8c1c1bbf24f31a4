"""Content-addressed embeddings: ``.evidence-cache/embeddings/<model>/<hh>/<content hash>``.

An entry is the sha256 of (model id, content hash, vector bytes) followed by the
float32 vector: a torn, truncated or edited entry fails that check and is
recomputed, never trusted.  Entries are derived data (``durable=False``: losing
one costs a recomputation) written through fsio by the activation that holds the
archive lock.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from evidence_tool import fsio
from evidence_tool.embedding import DenseEmbedder
from evidence_tool.embedding.vectors import to_blob

_DIGEST = 32


def _check(model_id: str, content_hash: str, blob: bytes) -> bytes:
    return hashlib.sha256(f"{model_id}\0{content_hash}\0".encode() + blob).digest()


@dataclass
class EmbeddingCache:
    folder: Path  # .evidence-cache/embeddings
    embedder: DenseEmbedder
    embedded: int = 0  # texts sent to the embedder by this cache (tests count them)
    hits: int = 0
    # Another cache folder, read (never written) on a miss: eval --compare embeds what the
    # workspace's cache lacks into a temporary folder and leaves the workspace untouched.
    also_read: Path | None = None
    _model_dir: Path = field(init=False)

    def __post_init__(self) -> None:
        key = hashlib.sha256(self.embedder.model_id.encode()).hexdigest()[:24]
        self._model_dir = self.folder / key

    def _path(self, content_hash: str, model_dir: Path | None = None) -> Path:
        name = content_hash.replace(":", "-")
        return (model_dir or self._model_dir) / name[-2:] / name

    def get(self, content_hash: str) -> bytes | None:
        """The cached float32 vector bytes, or None (absent, torn or edited)."""
        dirs = [self._model_dir]
        if self.also_read is not None:
            dirs.append(self.also_read / self._model_dir.name)
        for model_dir in dirs:
            try:
                data = self._path(content_hash, model_dir).read_bytes()
            except OSError:
                continue
            digest, blob = data[:_DIGEST], data[_DIGEST:]
            if len(blob) != 4 * self.embedder.dim:
                continue
            if digest == _check(self.embedder.model_id, content_hash, blob):
                return blob
        return None

    def put(self, content_hash: str, blob: bytes) -> None:
        digest = _check(self.embedder.model_id, content_hash, blob)
        fsio.write_atomic(self._path(content_hash), digest + blob, durable=False)

    def vectors(self, items: list[tuple[str, str]]) -> dict[str, bytes]:
        """content hash -> float32 vector bytes for ``items`` (content hash, text):
        cached ones read, the others embedded in one call and cached."""
        out: dict[str, bytes] = {}
        missing: dict[str, str] = {}
        for content_hash, text in items:
            blob = self.get(content_hash)
            if blob is None:
                missing.setdefault(content_hash, text)
            else:
                out[content_hash] = blob
        self.hits += len(out)
        if missing:
            hashes = list(missing)
            vectors = self.embedder.embed([missing[h] for h in hashes])
            self.embedded += len(hashes)
            for content_hash, vec in zip(hashes, vectors, strict=True):
                blob = to_blob(vec)
                self.put(content_hash, blob)
                out[content_hash] = blob
        return out


def question_key(text: str) -> str:
    """The cache key of a question's vector (eval): its text's hash, in a name space no
    unit's content hash can take."""
    return "question-" + hashlib.sha256(text.encode("utf-8")).hexdigest()
