"""Git's conflict markers: a merge or rebase that met two edits of one file wrote both
sides into it, between '<<<<<<<', '=======' and '>>>>>>>' lines.

One reader for every file a curator's pull can leave so: a unit (legal Markdown inside a
fence or a list, so it would be recorded and served as is), ``workspace.yaml`` and
``state.yaml``.
"""

from __future__ import annotations

import re

# Each marker a line of its own, as Git writes them; one such line alone is text (a 7-deep
# quoted email reply, arrows in a fenced diagram, a setext heading's rule).
_MARKERS = [re.compile(p, re.M) for p in (r"^<{7}(?: |$)", r"^={7}$", r"^>{7}(?: |$)")]


def conflict_line(text: str) -> int | None:
    """The line of the '<<<<<<<' that opens the first whole conflict in ``text``, or None.
    Each search starts where the last one matched, so it is linear in the text."""
    if "<<<<<<<" not in text:
        return None
    start = _MARKERS[0].search(text)
    middle = _MARKERS[1].search(text, start.end()) if start else None
    if start is None or middle is None or not _MARKERS[2].search(text, middle.end()):
        return None
    # The conflict opens at the last '<<<<<<<' before its '=======': an earlier one is text.
    opening = list(_MARKERS[0].finditer(text, start.start(), middle.start()))[-1]
    return text.count("\n", 0, opening.start()) + 1
