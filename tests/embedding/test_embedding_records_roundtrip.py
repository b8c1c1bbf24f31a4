"""Round trips of the embedding settings record (issue 18): ``from_json(to_json(x)) == x``,
and the installation's section read once with its kind's defaults."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evidence_tool.embedding import effective_embedding, embedder_for
from evidence_tool.embedding.http import HttpEmbedder
from evidence_tool.embedding.settings import EmbeddingSettings, embedding_settings
from evidence_tool.errors import DescriptorError
from evidence_tool.jsonvalue import JsonObject

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)
SETTINGS = st.builds(
    EmbeddingSettings,
    kind=st.sampled_from(["none", "http", "local", "someday"]),
    url=st.none() | WORD.map(lambda w: f"http://127.0.0.1:9/{w}"),
    model=st.none() | WORD,
    dimensions=st.none() | st.integers(1, 4096),
    batch_size=st.integers(1, 512),
    timeout_s=st.floats(0.01, 600, allow_nan=False),
    retries=st.integers(0, 9),
    backoff_s=st.floats(0, 60, allow_nan=False),
    api_key_env=st.none() | WORD.map(str.upper),
    languages=st.lists(st.sampled_from(["en", "it", "de", "pt-br"]), max_size=3).map(tuple),
)


@given(SETTINGS)
def test_embedding_settings_round_trip(settings: EmbeddingSettings) -> None:
    assert EmbeddingSettings.from_json(settings.to_json()) == settings


@pytest.mark.parametrize(
    ("section", "batch", "timeout", "retries"),
    [
        (
            {"kind": "http", "url": "https://e.test/v1/embeddings", "model": "m", "dimensions": 12},
            64,
            30.0,
            3,
        ),
        ({"kind": "local", "model": "x", "batch_size": 7}, 7, 30.0, 3),
        (
            {
                "kind": "http",
                "url": "http://e.test",
                "model": "m",
                "dimensions": "24",
                "retries": 0,
                "timeout_s": "2.5",
            },
            64,
            2.5,
            0,
        ),
    ],
)
def test_section_read_once_with_the_defaults_of_its_kind(
    section: JsonObject, batch: int, timeout: float, retries: int
) -> None:
    typed = embedding_settings(section)
    assert (typed.batch_size, typed.timeout_s, typed.retries) == (batch, timeout, retries)
    # config show keeps printing the section as written, with the defaults merged in
    shown = effective_embedding(section)
    assert next(iter(shown)) == "kind" and all(shown[k] == v for k, v in section.items())


def test_http_embedder_reads_the_typed_record_and_the_section_alike() -> None:
    section = {
        "kind": "http",
        "url": "http://127.0.0.1:9/v1",
        "model": "m",
        "dimensions": 8,
        "languages": ["EN"],
    }
    from_section = embedder_for(section)
    from_record = embedder_for(embedding_settings(section))
    assert isinstance(from_section, HttpEmbedder) and isinstance(from_record, HttpEmbedder)
    assert (from_section.model_id, from_section.languages) == ("http:m:8", frozenset({"en"}))
    assert (from_record.model_id, from_record.languages) == ("http:m:8", frozenset({"en"}))
    assert embedder_for({}) is None


@pytest.mark.parametrize("missing", ["url", "model", "dimensions"])
def test_a_missing_required_key_is_named(missing: str) -> None:
    section = {"kind": "http", "url": "http://127.0.0.1:9/v1", "model": "m", "dimensions": 8}
    del section[missing]
    with pytest.raises(DescriptorError, match=f"evidence.embedding.{missing} is required"):
        embedder_for(section)


def test_a_dimension_that_is_no_number_is_a_descriptor_error() -> None:
    with pytest.raises(DescriptorError, match=r"got `str` - at `\$\.dimensions`"):
        embedding_settings({"kind": "http", "dimensions": "many"})
