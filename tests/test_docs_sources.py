"""Every source the documentation names is linked, to the address docs/sources.md gives, on each
page that names it; every link is a well-formed https address or a file that exists; and every
repository file a page names (``resumebias_dagster/...``, ``tests/...``, ``core/...``) exists.
Issue 41: the studies, laws and methods were named but never linked. No network: addresses are
checked for form, not fetched."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
SOURCES_PAGE = DOCS / "sources.md"

SENIORITY = "https://github.com/AFKRainn/SeniortyPrediction"
STUDY_003 = ("https://github.com/re-cinq/hiring-bias", "https://re-cinq.github.io/hiring-bias")
UNIFORM_GUIDELINES = "https://www.ecfr.gov/current/title-29/subtitle-B/chapter-XIV/part-1607"

# name -> (what counts as naming it, the addresses a link to it may start with). Each address is
# one docs/sources.md gives; a page that names the source links one of them.
SOURCES: dict[str, tuple[str, tuple[str, ...]]] = {
    "the seniority study": (r"\bnotebooks? 00[014]\b|\bseniority study\b", (SENIORITY,)),
    "study 003": (r"\bstudy 003\b|\bre-cinq\b", STUDY_003),
    "Bertrand & Mullainathan": (r"\bBertrand\b|\bMullainathan\b", ("https://doi.org/10.1257/0002828042002561",)),
    "Local Law 144": (
        r"\bLocal Law 144\b",
        (
            "https://www.nyc.gov/site/dca/about/automated-employment-decision-tools.page",
            "https://rules.cityofnewyork.us/rule/automated-employment-decision-tools-updated/",
        ),
    ),
    "Local Law 144's rules": (
        r"\bRCNY\b|§ ?5-30\d",
        ("https://rules.cityofnewyork.us/rule/automated-employment-decision-tools-updated/",),
    ),
    "the EU AI Act": (r"\bAI Act\b|2024/1689", ("https://eur-lex.europa.eu/eli/reg/2024/1689/oj",)),
    "the Uniform Guidelines": (r"Uniform Guidelines|\b29 CFR\b|\bfour[- ]fifths\b", (UNIFORM_GUIDELINES,)),
    "Holm": (r"\bHolm\b", ("https://www.jstor.org/stable/4615733",)),
    "Simes": (r"\bSimes\b", ("https://doi.org/10.1093/biomet/73.3.751",)),
    "Benjamini–Hochberg": (
        r"Benjamini[–-]Hochberg|Benjamini & Hochberg",
        ("https://doi.org/10.1111/j.2517-6161.1995.tb02031.x",),
    ),
    "Benjamini–Bogomolov": (r"\bBogomolov\b", ("https://doi.org/10.1111/rssb.12028",)),
    "TOST": (r"\bTOST\b|[Tt]wo one-sided tests|\bSchuirmann\b", ("https://doi.org/10.1007/BF01068419",)),
    "Clopper–Pearson": (r"\bClopper\b", ("https://doi.org/10.1093/biomet/26.4.404",)),
    "Satterthwaite": (r"\bSatterthwaite\b", ("https://doi.org/10.2307/3002019",)),
    "Cohen's kappa": (r"\bCohen's kappa\b|\bkappa\b", ("https://doi.org/10.1177/001316446002000104",)),
    "Plackett–Luce": (r"\bPlackett\b", ("https://doi.org/10.2307/2346567",)),
}

# Pages held to a record, not to the rule: the changelog tells what each issue changed, in the
# words of its day (paths since moved, sources named in passing).
EXEMPT = {"changelog.md"}

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")


def pages() -> list[Path]:
    found = sorted(p for p in DOCS.rglob("*.md") if str(p.relative_to(DOCS)) not in EXEMPT)
    return [REPO / "README.md", *found]


def name(page: Path) -> str:
    return str(page.relative_to(REPO))


def prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans: names in code are not claims a reader
    follows, and a link cannot be put there."""
    return CODE_SPAN.sub(" ", FENCE.sub("\n", text))


def links(text: str) -> list[str]:
    """The targets of the Markdown links and autolinks of ``text`` (outside code)."""
    text = FENCE.sub("\n", text)
    return [m.group(1) for m in LINK.finditer(text)] + AUTOLINK.findall(text)


def unlinked_sources(text: str) -> list[str]:
    """The sources ``text`` names without a link to any of their addresses."""
    body, targets = prose(text), links(text)
    return [
        source
        for source, (pattern, prefixes) in SOURCES.items()
        if re.search(pattern, body) and not any(t.startswith(prefixes) for t in targets)
    ]


def malformed(url: str) -> str | None:
    """Why ``url`` is not a well-formed https address, or None."""
    parts = urlsplit(url)
    if parts.scheme != "https":
        return "not https"
    if not parts.netloc or "." not in parts.netloc or parts.netloc.startswith(".") or parts.netloc.endswith("."):
        return "no host"
    if re.search(r"[\s\"'<>`]", url):
        return "a space or quote in it"
    return None


def test_sources_page_gives_an_https_address_for_every_source():
    text = SOURCES_PAGE.read_text(encoding="utf-8")
    targets = links(text)
    missing = [s for s, (_, prefixes) in SOURCES.items() if not any(t.startswith(prefixes) for t in targets)]
    assert not missing, f"docs/sources.md gives no address for {missing}"
    bad = {t: why for t in targets if t.startswith("http") and (why := malformed(t))}
    assert not bad, f"docs/sources.md: {bad}"


@pytest.mark.parametrize("page", pages(), ids=name)
def test_every_source_a_page_names_is_linked(page):
    missing = unlinked_sources(page.read_text(encoding="utf-8"))
    assert not missing, (
        f"{name(page)} names {missing} without a link to the address docs/sources.md gives "
        "(link it once on the page, e.g. at its first mention)"
    )


@pytest.mark.parametrize("page", pages(), ids=name)
def test_every_link_is_https_or_a_file_that_exists(page):
    problems = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            if target.startswith("mailto:"):
                continue
            if why := malformed(target):
                problems.append(f"{target}: {why}")
            continue
        path = target.split("#", 1)[0]
        if path and not (page.parent / path).exists():
            problems.append(f"{target}: no such file")
    assert not problems, f"{name(page)}: " + "; ".join(problems)


# A code span naming a file of this repository: a path from the repository root, or from the
# package (the pages write ``core/inference/estimate.py`` for resumebias_dagster/core/...).
ROOTS = ("resumebias_dagster/", "tests/", "benchmarks/", "examples/", "deploy/", "docs/", ".ci/")
PACKAGE_DIRS = ("core/", "catalog/", "testing/", "resources/", "defs/", "instance/")
FILE_SPAN = re.compile(r"^[\w.\-/*]+(?:\.(?:py|md|yaml|yml|txt|j2|json|toml|csv)|/)$")


def repository_paths(text: str) -> list[str]:
    """The repository files and folders the code spans of ``text`` name."""
    found = []
    for match in CODE_SPAN.finditer(FENCE.sub("\n", text)):
        span = match.group(2).strip()
        if FILE_SPAN.match(span) and span.startswith(ROOTS + PACKAGE_DIRS):
            found.append(span)
    return found


def exists(span: str) -> bool:
    bases = [REPO] if span.startswith(ROOTS) else [REPO / "resumebias_dagster"]
    return any(any(base.glob(span.rstrip("/"))) for base in bases)


@pytest.mark.parametrize("page", pages(), ids=name)
def test_every_repository_file_a_page_names_exists(page):
    missing = sorted({p for p in repository_paths(page.read_text(encoding="utf-8")) if not exists(p)})
    assert not missing, f"{name(page)} names files that are not in the repository: {missing}"


def test_the_checks_can_fail():
    text = "Study 003 aside, study 003 found it; `core/no_such_module.py`; [x](http://example.com)."
    assert unlinked_sources(text) == ["study 003"]
    assert unlinked_sources(text + f" [study 003]({STUDY_003[0]})") == []
    assert unlinked_sources("`notebook 001` in code only") == []
    assert repository_paths(text) == ["core/no_such_module.py"] and not exists("core/no_such_module.py")
    assert exists("core/inference/estimate.py") and exists("catalog/prompts/judge_*.txt")
    assert malformed("http://example.com") == "not https"
    assert malformed("https://doi.org/10.1257/0002828042002561") is None
