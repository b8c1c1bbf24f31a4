"""Word-level diffs and excerpt highlighting, as escaped HTML fragments.

Lines are matched first and words only inside changed line blocks, so a
256 KiB unit never costs a quadratic word-by-word comparison of the whole
file.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from html import escape

_WORD = re.compile(r"\s+|\w+|[^\w\s]")


def _del(text: str) -> str:
    return f"<del>{escape(text)}</del>" if text else ""


def _ins(text: str) -> str:
    return f"<ins>{escape(text)}</ins>" if text else ""


def _words(old: str, new: str) -> Iterable[str]:
    a, b = _WORD.findall(old), _WORD.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            yield escape("".join(a[i1:i2]))
        else:
            yield _del("".join(a[i1:i2]))
            yield _ins("".join(b[j1:j2]))


def _context(lines: list[str], first: bool, last: bool, keep: int) -> str:
    """Unchanged lines, the middle of a long run folded into one marker line."""
    head = 0 if first else keep
    tail = 0 if last else keep
    if len(lines) <= head + tail + 1:
        return escape("".join(lines))
    folded = len(lines) - head - tail
    marker = f'<span class="fold">⋯ {folded} unchanged line(s) ⋯</span>\n'
    return escape("".join(lines[:head])) + marker + escape("".join(lines[len(lines) - tail :]))


def word_diff_html(old: str, new: str, context: int | None = 3) -> str:
    """``old`` -> ``new`` with removed words in ``<del>`` and added words in ``<ins>``;
    unchanged runs keep ``context`` lines around each change (None: keep everything)."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out: list[str] = []
    opcodes = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        old_block, new_block = "".join(a[i1:i2]), "".join(b[j1:j2])
        if tag == "equal":
            if context is None:
                out.append(escape(old_block))
            else:
                out.append(_context(a[i1:i2], n == 0, n == len(opcodes) - 1, context))
        elif tag == "replace":
            out.extend(_words(old_block, new_block))
        else:
            out.append(_del(old_block) + _ins(new_block))
    return "".join(out)


def highlight_excerpts(text: str, excerpts: dict[str, list[str]]) -> tuple[str, list[str]]:
    """``text`` escaped, every occurrence of an excerpt in ``<mark>``; and the excerpts
    that do not occur verbatim.  ``excerpts`` maps a unit id to its excerpts; each mark's
    title names the units it supports (overlapping excerpts share one mark)."""
    spans: list[tuple[int, int, str]] = []
    missing: list[str] = []
    for uid, found in excerpts.items():
        for excerpt in dict.fromkeys(found):
            if not excerpt:
                continue
            start = text.find(excerpt)
            if start == -1:
                missing.append(excerpt)
            while start != -1:
                spans.append((start, start + len(excerpt), uid))
                start = text.find(excerpt, start + len(excerpt))
    merged: list[tuple[int, int, list[str]]] = []
    for start, end, uid in sorted(spans):
        if merged and start <= merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), [*last[2], uid])
        else:
            merged.append((start, end, [uid]))
    out, pos = [], 0
    for start, end, uids in merged:
        names = escape("supports " + ", ".join(dict.fromkeys(uids)))
        out.append(escape(text[pos:start]))
        out.append(f'<mark title="{names}">{escape(text[start:end])}</mark>')
        pos = end
    out.append(escape(text[pos:]))
    return "".join(out), missing
