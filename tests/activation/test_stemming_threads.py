"""A server stems in several threads at once (the requests' questions and hits, the
postings' names loaded in the background): each word must get the stem it gets alone.
The stemmers keep their word in the object while they work (snowballstemmer's
``current``, PyStemmer's C state), so one shared object stemming two words at once gave a
wrong stem or an IndexError (E999 in a served search)."""

from __future__ import annotations

import random
import string
import sys
import threading

from evidence_tool.activation import analysis


def _words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    # Long words with the endings the stemmers strip: many steps, many cursor moves.
    ends = ["ational", "ization", "fulness", "iveness", "amente", "azione", "mente", "ingly"]
    return [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(6, 14))) + rng.choice(ends)
        for _ in range(n)
    ]


def test_threads_stemming_at_once_get_the_stems_one_thread_gets() -> None:
    words = {lang: _words(3000, seed) for seed, lang in enumerate(("en", "it"))}
    expected = {
        lang: [str(analysis._snowball_class(analysis._STEMMERS[lang])().stemWord(w)) for w in ws]
        for lang, ws in words.items()
    }
    analysis._stem_folded.cache_clear()  # every word below is a miss: the stemmer runs
    got: dict[tuple[str, int], list[str]] = {}
    failures: list[BaseException] = []
    start = threading.Barrier(8)

    def work(lang: str, part: int) -> None:
        try:
            start.wait()
            got[(lang, part)] = [analysis._stem_folded(w, lang) for w in words[lang][part::4]]
        except BaseException as exc:  # an IndexError inside the stemmer is the defect
            failures.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads inside a stemWord, as a loaded server does
    try:
        threads = [
            threading.Thread(target=work, args=(lang, p)) for lang in words for p in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not failures, failures[:3]
    stemmed = 0
    for (lang, part), stems in got.items():
        assert stems == expected[lang][part::4], lang
        stemmed += len(stems)
    assert stemmed == 6000
