"""How long the audit report is to a reader (issue 43): a report opened in Chromium at 1,280
pixels wide, as a reader opens it, and printed to PDF as a reader files it.

Prints, per audited tool, the height of its first screen (from the tool's heading to the end of
its plain-words summary) in pixels and in screens (a screen: the 800-pixel-high window of a
laptop at 1,280 wide), then the whole page's height, each part's height, and the printed PDF's
pages. Chromium renders the same page the same way on any machine: these figures do not depend
on the CPU, which is printed anyway.

Run: python benchmarks/bench_report_length.py [DATA_DIR or REPORT.html]
     (default: ./data/reports/audit_report.html; `resumebias run` writes it)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _machine import cpu_model  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
WIDTH, SCREEN = 1280, 800


def report_path(where: str) -> Path:
    path = Path(where)
    return path / "reports" / "audit_report.html" if path.is_dir() else path


def measure(report: Path) -> dict:
    """Per tool its first screen's height; the page's and each part's height; the PDF's pages."""
    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": SCREEN})
        page.goto(report.resolve().as_uri())
        tools = page.evaluate(
            "[...document.querySelectorAll('section.tool')].map(s => [s.querySelector('h2').innerText,"
            " s.querySelector('.first-screen').getBoundingClientRect().bottom - s.getBoundingClientRect().top])"
        )
        parts = page.evaluate(
            "[...document.querySelectorAll('body > header, body > section')]"
            ".map(s => [s.id, s.getBoundingClientRect().height])"
        )
        height = page.evaluate("document.documentElement.scrollHeight")
        page.emulate_media(media="print")
        with tempfile.TemporaryDirectory() as tmp:
            pdf = Path(tmp) / "report.pdf"
            page.pdf(path=str(pdf), format="A4", print_background=True)
            pages = len(PdfReader(str(pdf)).pages)
        browser.close()
    return {"tools": tools, "parts": parts, "height": height, "pages": pages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("where", nargs="?", default="data", help="a data directory or a report file")
    report = report_path(parser.parse_args().where)
    if not report.is_file():
        raise SystemExit(f"{report}: no report there (resumebias run writes data/reports/audit_report.html)")
    m = measure(report)
    print(f"report {report} ({report.stat().st_size:,} bytes); CPU {cpu_model()} (the figures do not depend on it)")
    print(f"{'tool':<28}{'first screen px':>16}{'screens':>9}")
    for name, px in m["tools"]:
        print(f"{name:<28}{px:>16,.0f}{px / SCREEN:>9.2f}")
    print(
        f"whole page: {m['height']:,} px at {WIDTH} wide ({m['height'] / SCREEN:.1f} screens); PDF: {m['pages']} A4 pages"
    )
    print("parts: " + ", ".join(f"{part or '(unnamed)'} {px:,.0f}" for part, px in m["parts"]))


if __name__ == "__main__":
    main()
