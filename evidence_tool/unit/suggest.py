"""Suggestions for near-miss headings, so an error names the fix."""

from __future__ import annotations

from evidence_tool.unit.fields import ALL_HEADINGS, FIELDS, is_italian
from evidence_tool.unit.schemacompile import closest


def heading_suggestion(text: str, kind: str | None, language: str) -> tuple[str | None, str] | None:
    """(the field heading meant, or None if no single one, the hint) for a non-field H2."""
    if kind not in FIELDS:
        return None
    lang_name = "Italian" if is_italian(language) else "English"
    for spec in FIELDS[kind]:
        right = spec.heading(language)
        other = spec.en if is_italian(language) else spec.it
        if text == other and text != right:
            return right, (
                f"'## {text}' is the {'English' if lang_name == 'Italian' else 'Italian'} "
                f"heading; a unit in language '{language}' uses the {lang_name} "
                f"heading '## {right}'"
            )
    wanted = [spec.heading(language) for spec in FIELDS[kind]]
    for right in wanted:
        if text.casefold() == right.casefold() or text.strip(" :") == right:
            return right, f"did you mean '## {right}'?"
    close = closest(text, wanted, 0.75)
    if close:
        return close, f"did you mean '## {close}'?"
    if text in ALL_HEADINGS:
        return None, f"'## {text}' is not a field of kind '{kind}'; its fields are " + ", ".join(
            f"'## {h}'" for h in wanted
        )
    return None


def did_you_mean(given: str, choices: list[str] | set[str]) -> str:
    """'; did you mean 'x'?' for the closest of ``choices`` (ids, names), or ''."""
    close = closest(given, choices, 0.8)
    return f"; did you mean '{close}'?" if close else ""


def did_you_mean_live(given: str, live: set[str], retired: dict[str, str]) -> str:
    """'; did you mean ...' preferring a live id: a deleted or retired id (``retired``:
    id -> how it left, e.g. 'deleted') is suggested only when no live one is close, and
    is always marked, so that a reader is not sent to knowledge that was replaced."""
    near_live = closest(given, live, 0.8)
    near_gone = closest(given, retired, 0.8)
    if near_live is not None:
        also = f" ('{near_gone}' is {retired[near_gone]})" if near_gone is not None else ""
        return f"; did you mean '{near_live}'?{also}"
    if near_gone is not None:
        return f"; did you mean '{near_gone}' ({retired[near_gone]})?"
    return ""
