"""What a consolidate of one edited unit imports beyond a no-op: only what it uses (issue 20).

Counts of imported modules in a real ``tht`` process, never time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO, tht_modules


def _consolidate(root: Path) -> tuple[set[str], str]:
    """The modules a ``tht workspace evidence consolidate`` process loaded, and its output."""
    return tht_modules(root, "workspace", "evidence", "consolidate")


def _python(code: str) -> str:
    """What ``python -c code`` of this tree prints."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    ).stdout


def _edited_workspace(tmp_path: Path) -> Path:
    """A consolidated workspace (both languages) with one Italian unit edited since."""
    sys.path.insert(0, str(REPO))
    from bench.generate import generate

    root = generate(37, tmp_path / "ws", seed=13)
    _consolidate(root)
    italian = [
        p
        for p in sorted((root / "evidence" / "curated").rglob("*.md"))
        if "\nlanguage: it\n" in p.read_text(encoding="utf-8")
    ]
    assert italian, "the generated workspace has no Italian unit"
    unit = italian[-1]
    unit.write_text(
        unit.read_text(encoding="utf-8").rstrip("\n") + " Ricoveri ripetuti.\n", encoding="utf-8"
    )
    return root


def test_one_edited_unit_loads_no_stemmer_of_a_language_it_does_not_analyse(
    tmp_path: Path,
) -> None:
    loaded, output = _consolidate(_edited_workspace(tmp_path))
    assert "modified (1)" in output  # the edit was consolidated and activated
    stemmers = sorted(m.rsplit(".", 1)[-1] for m in loaded if m.endswith("_stemmer"))
    # English and Italian are the analysed languages (Porter and Snowball Italian); the
    # edited unit is Italian, so at least its stemmer ran, and none of the other 34.
    assert "italian_stemmer" in stemmers
    assert set(stemmers) <= {"porter_stemmer", "italian_stemmer"}, stemmers


def test_the_real_snowballstemmer_still_imports_whole_after_the_index_stemmed() -> None:
    """The two stemmers load under a private name: a later ``import snowballstemmer`` in the
    same process gets the whole package, and both give the same stems."""
    code = (
        "from evidence_tool.activation import analysis\n"
        "words = ['ricoveri', 'dimissione', 'running', 'hospitalisations', 'degenze']\n"
        "ours = [analysis.stem(w, lang) for w in words for lang in ('en', 'it')]\n"
        "import snowballstemmer\n"
        "theirs = [snowballstemmer.stemmer({'en': 'porter', 'it': 'italian'}[lang])"
        ".stemWord(w) for w in words for lang in ('en', 'it')]\n"
        "assert ours == theirs, (ours, theirs)\n"
        "print(len(snowballstemmer.algorithms()), len(ours))\n"
    )
    out = _python(code)
    algorithms, compared = map(int, out.split())
    assert algorithms > 2 and compared == 10


def test_one_edited_unit_parses_without_markdown_its_inline_machinery(tmp_path: Path) -> None:
    """Units are parsed for their block structure only: markdown-it's inline rules, its
    inline parser and its MarkdownIt class (which builds both) are never imported."""
    loaded, output = _consolidate(_edited_workspace(tmp_path))
    assert "modified (1)" in output
    assert "markdown_it.parser_block" in loaded  # the edited unit was parsed
    inline = sorted(
        m
        for m in loaded
        if m.startswith(("markdown_it.rules_inline", "markdown_it.parser_inline"))
        or m in ("markdown_it.main", "markdown_it.helpers", "markdown_it.renderer")
    )
    assert inline == []


def test_markdown_it_whole_still_imports_after_a_block_only_parse() -> None:
    """The block parser loads markdown-it's package without its MarkdownIt: a later
    ``from markdown_it import MarkdownIt`` in the same process still gets the whole one,
    and it parses a body to the tokens the block parser gave."""
    code = (
        "from evidence_tool.unit import parse_unit\n"
        "from evidence_tool.unit import blockrules\n"
        "text = '# T\\n\\n- a\\n- b\\n\\n[r]: http://x\\n\\n> q\\n'\n"
        "ours = blockrules.parser_for(text).parse(text)\n"
        "import markdown_it\n"
        "from markdown_it import MarkdownIt\n"
        "md = MarkdownIt('commonmark')\n"
        "md.disable(['inline', 'text_join'])\n"
        "theirs = md.parse(text)\n"
        "assert ours == theirs, (ours, theirs)\n"
        "assert MarkdownIt('commonmark').render('*x*') == '<p><em>x</em></p>\\n'\n"
        "print(markdown_it.__version__, len(ours))\n"
    )
    out = _python(code)
    version, tokens = out.split()
    assert version[0].isdigit() and int(tokens) > 8
