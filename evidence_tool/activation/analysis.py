"""Text analysis for the lexical index: fold, drop stop words, stem by language.

FTS5 has one tokenizer per table and no Italian stemmer, so the analysis runs
here, in Python, on the indexed text (by the unit's language) and on the query
(by every analysed language: a query does not say its language).  The index
then stores stems, tokenized by ``unicode61``.  English uses the Porter
stemmer and Italian the Snowball Italian stemmer, both from the pure-Python
``snowballstemmer`` package (docs/retrieval.md, "Lexical search").
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import threading
import types
import unicodedata
from functools import cache, lru_cache
from typing import Any

_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # "_" separates, as in unicode61


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Function words only: a stop word never names a clinical concept.
STOP_WORDS: dict[str, frozenset[str]] = {
    "en": _words(
        "a about all an and any are as at be been by can could did do does each for from "
        "has have how i if in into is it its me my of on or our per should so than that "
        "the their them then there these they this those to use used was we were what "
        "when where which who whom why will with would you your"
    ),
    "it": _words(
        "a ad al alla alle agli ai allo anche che chi come con cosa cui da dal dalla dalle "
        "dai degli dei del della delle dello di e ed gli ha hanno i il in la le lo ma mi "
        "ci vi ne negli nei nel nella nelle nello non o per piu qual quale quali quando quanti "
        "quante quanto quanta se si sono su sul sulla sulle sui tra fra un una uno va "
        "viene vengono essere"
    ),
}
_STEMMERS = {"en": "porter", "it": "italian"}
ANALYSED = tuple(_STEMMERS)


def fold(word: str) -> str:
    """Case- and accent-folded, as FTS5's ``unicode61 remove_diacritics 2`` folds."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def base_language(tag: str) -> str:
    """``it-CH`` -> ``it``; the analysed languages are keyed by primary subtag."""
    return tag.split("-", 1)[0].lower()


@cache
def _stemmer(language: str) -> Any:
    """The stemmer ``snowballstemmer.stemmer`` gives for ``language``: PyStemmer's when it
    is installed (snowballstemmer prefers it too), else the pure-Python class, loaded on
    first use (a no-op consolidate builds no index rows)."""
    name = _STEMMERS[language]
    try:
        import Stemmer
    except ImportError:
        return _snowball_class(name)()
    return Stemmer.Stemmer(name)


# snowballstemmer's package __init__ imports the modules of all its 36 languages to serve
# two (20-30 ms of a one-edit consolidate): those two are loaded alone, from its folder,
# under a private package name that never shadows the real package.
_SNOWBALL_MODULES = {
    "porter": ("porter_stemmer", "PorterStemmer"),
    "italian": ("italian_stemmer", "ItalianStemmer"),
}
_PRIVATE_PACKAGE = "evidence_tool.activation._snowball"


def _snowball_class(name: str) -> Any:
    module_name, class_name = _SNOWBALL_MODULES[name]
    if _PRIVATE_PACKAGE not in sys.modules:
        spec = importlib.util.find_spec("snowballstemmer")  # finds it; runs nothing
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("snowballstemmer is not installed: reinstall evidence-tool")
        package = types.ModuleType(_PRIVATE_PACKAGE)
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules[_PRIVATE_PACKAGE] = package
    module = importlib.import_module(f"{_PRIVATE_PACKAGE}.{module_name}")
    return getattr(module, class_name)


def stem(word: str, language: str) -> str:
    """``word`` folded and stemmed for ``language`` (folded only for other languages)."""
    return _stem_folded(fold(word), base_language(language))


# A corpus repeats its words: the stemmers are pure Python (~50 µs a word), and building
# an index stemmed every occurrence again.  Both caches are bounded; a miss recomputes.
@lru_cache(maxsize=1 << 16)
def _stem_folded(folded: str, lang: str) -> str:
    if lang not in _STEMMERS or not folded.isalpha():
        return folded  # codes, numbers and identifiers keep their exact form
    # A stemmer keeps the word it works on in the object (snowballstemmer's ``current``,
    # PyStemmer's C state): a server's threads must not stem with it at once.
    with _STEMMING:
        return str(_stemmer(lang).stemWord(folded))


_STEMMING = threading.Lock()


@lru_cache(maxsize=1 << 16)
def _term(word: str, lang: str) -> str | None:
    """One word's indexed form for a primary language; None for a stop word."""
    folded = fold(word)
    if folded in STOP_WORDS.get(lang, _NO_STOPS):
        return None
    return _stem_folded(folded, lang)


_NO_STOPS: frozenset[str] = frozenset()


def analyse(text: str, language: str) -> str:
    """Indexed form of ``text``: its words stemmed for ``language``, stop words dropped."""
    lang = base_language(language)
    terms = [_term(w, lang) for w in _WORD.findall(text)]
    return " ".join(t for t in terms if t is not None)


def query_terms(text: str) -> list[set[str]]:
    """One set of alternatives per content word of a query: its stem in each analysed
    language.  A word that is a stop word in any analysed language is dropped."""
    stops = frozenset().union(*STOP_WORDS.values())
    terms: list[set[str]] = []
    for word in _WORD.findall(text):
        if fold(word) in stops:
            continue
        alternatives = {stem(word, lang) for lang in ANALYSED}
        if alternatives not in terms:
            terms.append(alternatives)
    return terms


def query_language(text: str) -> str | None:
    """The analysed language a query is written in, told by its function words: the one
    with more stop words of its own (not shared) in the text; None when none or a tie."""
    words = [fold(w) for w in _WORD.findall(text)]
    counts = {
        lang: sum(w in own for w in words)
        for lang, own in ((lang, _own_stop_words(lang)) for lang in ANALYSED)
    }
    ranked = sorted(counts.items(), key=lambda item: -item[1])
    if ranked[0][1] == 0 or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
        return None
    return ranked[0][0]


@cache
def _own_stop_words(language: str) -> frozenset[str]:
    """Stop words of ``language`` that no other analysed language shares ('a', 'i', 'in')."""
    others = frozenset().union(*(STOP_WORDS[x] for x in ANALYSED if x != language))
    return STOP_WORDS[language] - others
