"""Take the screenshots of docs/review-page.md with the same Chromium the tests use.

    PYTHONPATH=. python tests/report/screenshot.py docs/img

The workspace is ``report_helpers.rich_workspace`` (the shipped fixture with
a pending comparison against local units, a modified, a deleted and an
invalid file), built in a temporary folder with a pinned clock and actor.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report_helpers import CHROMIUM, CHROMIUM_ARGS, LAB, ok, record, rich_workspace, tht


def _clip(page: object, selector: str, height: int) -> dict[str, float]:
    """The element's top part, in page coordinates (screenshots are full-page)."""
    top, tall = page.locator(selector).first.evaluate(  # type: ignore[attr-defined]
        "e => [e.getBoundingClientRect().top + window.scrollY, e.offsetHeight]"
    )
    return {"x": 0, "y": max(0, top - 12), "width": 1280, "height": min(tall + 24, height)}


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    os.environ.update({"THT_NOW": "2026-11-30T09:00:00Z", "THT_ACTOR": "alice"})
    os.environ.pop("THT_INSTALLATION", None)
    out.mkdir(parents=True, exist_ok=True)
    # A fixed folder (the page shows its path), so unchanged pages give unchanged images.
    tmp = Path(tempfile.gettempdir()) / "evidence-review-screenshots"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        ws = rich_workspace(tmp / "psd-clinical")
        page_path = Path(ok(tht(ws, "report"))["path"])
        sid = record(ws, LAB)["source_id"]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(page_path.as_uri())
            page.screenshot(
                path=str(out / "review-page.png"), clip=_clip(page, "body", 1500), full_page=True
            )
            comparison = f"article.comparison[data-source-id='{sid}']"
            page.screenshot(
                path=str(out / "review-page-comparison.png"),
                clip=_clip(page, comparison, 1500),
                full_page=True,
            )
            page.select_option("#f-kind", "domain")
            # A viewport shot: cards render when on screen (content-visibility: auto).
            page.set_viewport_size({"width": 1280, "height": 1100})
            page.evaluate("() => document.getElementById('units').scrollIntoView()")
            page.screenshot(path=str(out / "review-page-units.png"))
            browser.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/img"))
