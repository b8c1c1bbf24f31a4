"""The index's analyser stems each distinct word once, and its cached answers are the
stemmer's own (issue 20: the stemmers are pure Python and dominated an index build)."""

from __future__ import annotations

import random
import unicodedata

import pytest
import snowballstemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from evidence_tool.activation import analysis


def _reference(text: str, language: str) -> str:
    """The analyser without caches: fold, drop stop words, stem with snowballstemmer."""
    lang = language.split("-", 1)[0].lower()
    stops = analysis.STOP_WORDS.get(lang, frozenset())
    out = []
    for word in analysis._WORD.findall(text):
        decomposed = unicodedata.normalize("NFKD", word.casefold())
        folded = "".join(c for c in decomposed if not unicodedata.combining(c))
        if folded in stops:
            continue
        if lang in ("en", "it") and folded.isalpha():
            name = {"en": "porter", "it": "italian"}[lang]
            folded = snowballstemmer.stemmer(name).stemWord(folded)
        out.append(folded)
    return " ".join(out)


class _Counting:
    def __init__(self, lang: str, calls: list[tuple[str, str]]) -> None:
        self.lang, self.real, self.calls = lang, _REAL_STEMMER(lang), calls

    def stemWord(self, word: str) -> str:
        self.calls.append((self.lang, word))
        return str(self.real.stemWord(word))


_REAL_STEMMER = analysis._stemmer


def test_each_distinct_word_is_stemmed_once_per_language(monkeypatch: pytest.MonkeyPatch) -> None:
    vocabulary = [
        "Pazienti",
        "ricoverati",
        "admissions",
        "counted",
        "Città",
        "dimessi",
        "per",
        "the",
        "reparto",
        "wards",
        "events",
        "giorni",
        "x12",
        "età",
    ]
    rng = random.Random(11)
    texts = [" ".join(rng.choice(vocabulary) for _ in range(60)) for _ in range(40)]
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(analysis, "_stemmer", lambda lang: _Counting(lang, calls))
    for cached in vars(analysis).values():  # a clean start: no word stemmed yet
        if hasattr(cached, "cache_clear") and cached is not analysis._stemmer:
            cached.cache_clear()
    for language in ("it", "en-GB"):
        for text in texts:
            assert analysis.analyse(text, language) == _reference(text, language)
    # 2,400 word occurrences per language; stop words ("per" in both, "the" in English)
    # and codes are not stemmed: 12 distinct words in Italian, 11 in English, each once.
    assert len(calls) == len(set(calls)) == 12 + 11


_WORDS = st.text(
    alphabet=st.sampled_from("aeiouàèéìòùbcdfglmnprstvzAEIOUÀÈ_0123456789"), min_size=1, max_size=12
)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(
        st.one_of(_WORDS, st.sampled_from(["il", "della", "the", "and", "Of"])), max_size=40
    ),
    seps=st.sampled_from([" ", "\n", ", ", " - ", "'"]),
    language=st.sampled_from(["it", "en", "it-CH", "EN-us", "de", "fr-FR"]),
)
def test_cached_analysis_is_the_stemmers_own(words: list[str], seps: str, language: str) -> None:
    text = seps.join(words)
    assert analysis.analyse(text, language) == _reference(text, language)
    assert analysis.analyse(text, language) == _reference(text, language)  # from the caches
    for word in analysis._WORD.findall(text):  # stem() keeps stop words, else the same
        if _reference(word, language):
            assert analysis.stem(word, language) == _reference(word, language)
