"""Deterministic résumé style rewriter (neutral / overstated / understated).

The rewriter works on plain text, so it also rewrites résumés this project did not
generate. It touches only SUMMARY sentences and bullet lines of experience-like sections;
every other line (name, contact, job titles, employers, dates, EDUCATION, SKILLS) is kept
byte-identical, which is what keeps the facts equal across the three styles. All wording
lives in ``catalog/style_rewrites.yaml``. Notebook 004 tone score is in ``core/seniority/style_validation.py``
with its own lexicon, which this module never reads (so the validation is not circular).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from resumebias_dagster.catalog import CatalogError, load_yaml
from resumebias_dagster.core.common.labels import STYLES

REWRITES_FILE = "style_rewrites.yaml"

CatalogDir = str | os.PathLike | None

_BULLET = re.compile(r"^(\s*(?:[-•*▪◦]|\d+[.)])\s+)(.*?)(\s*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_ALL_CAPS_HEADER = re.compile(r"^[A-Z][A-Z &/,'-]{2,40}:?$")
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_DATE = rf"(?:{_MONTH}\s+\d{{4}}|\d{{1,2}}/\d{{4}}|\d{{4}})"
_DATE_RANGE = re.compile(rf"{_DATE}\s*(?:–|—|-|to)\s*(?:{_DATE}|Present|Current|Now)", re.IGNORECASE)
_VOWEL_SOUND = re.compile(r"^[aeiou]", re.IGNORECASE)


# --------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class _Verb:
    past: str
    base: str
    gerund: str
    power: tuple[str, ...]


@dataclass(frozen=True)
class _PhraseMap:
    pattern: re.Pattern | None
    options: dict[str, tuple[str, ...]]

    def apply(self, text: str, pick, context: str) -> str:
        if self.pattern is None:
            return text

        def repl(m: re.Match) -> str:
            found = m.group(0)
            key = " ".join(found.lower().split())
            out = pick(self.options[key], "phrase", key, context)
            return out[:1].upper() + out[1:] if found[:1].isupper() else out

        return self.pattern.sub(repl, text)


@dataclass(frozen=True)
class _Rules:
    headers: dict[str, str]
    verbs: dict[str, _Verb]
    verb_pattern: re.Pattern
    # A later coordinated clause led by a known verb ("... and presented the findings").
    next_verb: re.Pattern
    impact: re.Pattern
    amplifiers: tuple[str, ...]
    impact_adverbs: tuple[str, ...]
    claims: tuple[str, ...]
    summary_intro: tuple[str, ...]
    summary_outro: tuple[str, ...]
    over_phrases: _PhraseMap
    under_templates: tuple[str, ...]
    unknown_suffix: str
    modifiers: tuple[str, ...]
    remove: tuple[re.Pattern, ...]
    under_phrases: _PhraseMap
    under_outro: tuple[str, ...]
    under_summary_sentences: int
    cut: re.Pattern | None
    cut_min_words: int


def _alternation(phrases: Iterable[str]) -> str:
    """Regex alternation of phrases, longest first so a phrase beats its own first word."""
    parts = sorted({" ".join(p.lower().split()) for p in phrases}, key=lambda p: (-len(p), p))
    return "|".join(r"\s+".join(re.escape(w) for w in p.split()) for p in parts)


def _words_pattern(phrases: Iterable[str]) -> re.Pattern | None:
    """Whole-word, case-insensitive matcher of ``phrases``."""
    body = _alternation(phrases)
    if not body:
        return None
    return re.compile(rf"(?<![A-Za-z0-9])(?:{body})(?![A-Za-z0-9])", re.IGNORECASE)


def _strings(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CatalogError(f"{REWRITES_FILE}: {what} must be a string or a list of strings")
    return tuple(value)


def _phrase_map(section: Any, what: str) -> _PhraseMap:
    if not isinstance(section, dict):
        raise CatalogError(f"{REWRITES_FILE}: {what} must map phrases to replacement lists")
    options = {" ".join(k.lower().split()): _strings(v, f"{what}.{k}") for k, v in section.items()}
    return _PhraseMap(_words_pattern(options), options)


def _build_rules(data: Any) -> _Rules:
    try:
        sections = data["sections"]
        headers = {}
        for kind in ("summary", "experience", "education", "skills"):
            for name in _strings(sections[kind], f"sections.{kind}"):
                headers[" ".join(name.upper().split())] = kind

        over, under = data["overstated"], data["understated"]
        classes = {k: _strings(v, f"overstated.verb_classes.{k}") for k, v in over["verb_classes"].items()}
        if "default" not in classes:
            raise CatalogError(f"{REWRITES_FILE}: overstated.verb_classes needs a 'default' class")
        verbs = {}
        for past, spec in data["verbs"].items():
            klass = spec.get("class", "default")
            if klass not in classes:
                raise CatalogError(f"{REWRITES_FILE}: verb {past!r} has unknown class {klass!r}")
            power = _strings(spec["power"], f"verbs.{past}.power") if "power" in spec else classes[klass]
            key = " ".join(past.lower().split())
            verbs[key] = _Verb(key, spec["base"], spec["gerund"], power)
        verb = rf"(?:{_alternation(verbs)})(?![A-Za-z0-9])"
        gerunds = _alternation(_strings(data["impact_gerunds"], "impact_gerunds"))

        return _Rules(
            headers=headers,
            verbs=verbs,
            verb_pattern=re.compile(rf"^(?P<v1>{verb})(?:\s+and\s+(?P<v2>{verb}))?", re.IGNORECASE),
            next_verb=re.compile(rf",?\s+and\s+(?P<v>{verb})", re.IGNORECASE),
            impact=re.compile(rf",\s+(?:and\s+)?(?:{gerunds})\b[^.;]*", re.IGNORECASE),
            amplifiers=_strings(over["amplifiers"], "overstated.amplifiers"),
            impact_adverbs=_strings(over["impact_adverbs"], "overstated.impact_adverbs"),
            claims=_strings(over["claims"], "overstated.claims"),
            summary_intro=_strings(over["summary_intro"], "overstated.summary_intro"),
            summary_outro=_strings(over["summary_outro"], "overstated.summary_outro"),
            over_phrases=_phrase_map(over["phrases"], "overstated.phrases"),
            under_templates=_strings(under["verb_templates"], "understated.verb_templates"),
            unknown_suffix=str(under["unknown_suffix"]),
            modifiers=_strings(under["modifiers"], "understated.modifiers"),
            remove=tuple(re.compile(p, re.IGNORECASE) for p in _strings(under["remove"], "understated.remove")),
            under_phrases=_phrase_map(under["phrases"], "understated.phrases"),
            under_outro=_strings(under["summary_outro"], "understated.summary_outro"),
            under_summary_sentences=int(under["summary_sentences"]),
            cut=_words_pattern(_strings(under["cut_before"], "understated.cut_before")),
            cut_min_words=int(under["cut_min_words"]),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise CatalogError(f"{REWRITES_FILE}: missing or malformed entry ({exc!r})") from exc
    except re.error as exc:
        raise CatalogError(f"{REWRITES_FILE}: invalid regular expression ({exc})") from exc


# load_yaml returns the same object while the file is unchanged, so the compiled rules are
# cached by that object's identity (the entry keeps the object alive, so ids are not reused).
_RULES_CACHE: dict[int, tuple[Any, _Rules]] = {}


def _rules(catalog_dir: CatalogDir) -> _Rules:
    data = load_yaml(REWRITES_FILE, catalog_dir)
    hit = _RULES_CACHE.get(id(data))
    if hit is not None and hit[0] is data:
        return hit[1]
    rules = _build_rules(data)
    if len(_RULES_CACHE) > 16:
        _RULES_CACHE.clear()
    _RULES_CACHE[id(data)] = (data, rules)
    return rules


# --------------------------------------------------------------------------- sections


def _line_kinds(lines: Sequence[str], rules: _Rules) -> list[str]:
    """Kind of every line: 'contact' before the first known header, 'header', or the section kind.

    An unknown all-caps line after a blank line (e.g. AWARDS) opens an 'other' section,
    which is never rewritten; the blank line keeps degree lines such as "MBA" out.
    """
    kinds = []
    current = "contact"
    for i, line in enumerate(lines):
        stripped = line.strip()
        key = " ".join(stripped.rstrip(":").upper().split())
        after_blank = i > 0 and not lines[i - 1].strip()
        if stripped and key in rules.headers:
            current = rules.headers[key]
            kinds.append("header")
        elif current != "contact" and after_blank and _ALL_CAPS_HEADER.match(stripped):
            current = "other"
            kinds.append("header")
        else:
            kinds.append(current)
    return kinds


# --------------------------------------------------------------------------- rewriting


def _picker(seed: int, salt: str):
    def pick(options: Sequence[str], *key: str) -> str:
        digest = hashlib.blake2b("\x1f".join((str(seed), salt, *key)).encode("utf-8"), digest_size=8).digest()
        return options[int.from_bytes(digest, "big") % len(options)]

    return pick


def _form_of(template: str) -> str:
    """Which verb form a template needs: a bare power verb stands for the past form."""
    for form in ("base", "gerund", "past"):
        if "{" + form + "}" in template:
            return form
    return "past"


def _render(template: str, verbs: list[_Verb]) -> str:
    if "{" in template:
        return template.format(**{f: " and ".join(getattr(v, f) for v in verbs) for f in ("base", "gerund", "past")})
    return " and ".join([template] + [v.past for v in verbs[1:]])


def _after_article(rest: str, word: str, articles: tuple[str, ...]) -> str:
    """Insert ``word`` after a leading article of ``rest``, fixing a/an."""
    m = re.match(r"^(\s+)(a|an|the)(\s+)(?!\S+'s\b)", rest, re.IGNORECASE)
    if not m or m.group(2).lower() not in articles:
        return rest
    article = m.group(2)
    if article.lower() in ("a", "an"):
        article = "an" if _VOWEL_SOUND.match(word) else "a"
    return f"{m.group(1)}{article} {word}{m.group(3)}{rest[m.end() :]}"


def _split_verbs(body: str, rules: _Rules) -> tuple[list[_Verb], str]:
    m = rules.verb_pattern.match(body)
    if not m:
        return [], body
    verbs = [rules.verbs[" ".join(m.group("v1").lower().split())]]
    if m.group("v2"):
        verbs.append(rules.verbs[" ".join(m.group("v2").lower().split())])
    return verbs, body[m.end() :]


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]{2,}", " ", text)
    text = re.sub(r"\s+([,.;:])", r"\1", text)
    return text.strip()


def _overstate(body: str, rules: _Rules, pick, bullet: bool) -> str:
    verbs, rest = _split_verbs(body, rules)
    rest = rules.over_phrases.apply(rest, pick, body)
    head = ""
    if verbs:
        template = pick(verbs[0].power, "verb", body)
        head = _render(template, verbs)
        rest = _after_article(rest, pick(rules.amplifiers, "amplifier", body), ("a", "an", "the"))
        second = rules.next_verb.search(rest)
        if second:
            # Keep the coordinated verb in the form the new head needs ("to analyze ... and present").
            verb = rules.verbs[" ".join(second.group("v").lower().split())]
            rest = rest[: second.start("v")] + getattr(verb, _form_of(template)) + rest[second.end("v") :]

    def amplify(m: re.Match) -> str:
        clause = m.group(0)
        g = re.match(r",\s+(and\s+)?", clause)
        assert g is not None  # ``rules.impact`` matches only clauses that open this way
        return f"{g.group(0)}{pick(rules.impact_adverbs, 'adverb', body)} {clause[g.end() :]}"

    rest, amplified = rules.impact.subn(amplify, rest, count=1)
    if bullet and not amplified:
        rest = f"{rest}, {pick(rules.claims, 'claim', body)}"
    out = _tidy(head + rest)
    return out[:1].upper() + out[1:]


_DANGLING = re.compile(r"\s+(?:[a-z]{2,}ed|responsible|available|due)$")


def _cut_detail(rest: str, rules: _Rules) -> str:
    """Cut ``rest`` before the first detail phrase that follows enough words of the object."""
    if rules.cut is None:
        return rest
    for m in rules.cut.finditer(rest):
        before = rest[: m.start()]
        words = before.split()
        if len(words) < rules.cut_min_words or re.search(r"\d$", before.rstrip()):
            continue
        return _DANGLING.sub("", before.rstrip())
    return rest


def _understate(body: str, rules: _Rules, pick, bullet: bool) -> str:
    verbs, rest = _split_verbs(body, rules)
    rest = rules.impact.sub("", rest)
    second = rules.next_verb.search(rest) if verbs else None
    if second:
        # A routine-sounding bullet names one task, not two.
        rest = rest[: second.start()]
    for pattern in rules.remove:
        rest = pattern.sub("", rest)
    rest = rules.under_phrases.apply(rest, pick, body)
    if verbs and bullet:
        rest = _cut_detail(rest, rules)
    head = ""
    if verbs:
        head = _render(pick(rules.under_templates, "verb", body), verbs)
        rest = _after_article(rest, pick(rules.modifiers, "modifier", body), ("a", "an"))
    elif bullet:
        rest = rest + rules.unknown_suffix
    out = _tidy(head + rest)
    return out[:1].upper() + out[1:]


def _rewrite_sentences(paragraph: str, style: str, rules: _Rules, pick, bullet: bool) -> str:
    sentences = [s for s in _SENTENCE_END.split(paragraph.strip()) if s]
    out = []
    for sentence in sentences:
        end = sentence[-1] if sentence[-1] in ".!?" else ""
        body = sentence[:-1] if end else sentence
        fn = _overstate if style == "overstated" else _understate
        rewritten = fn(body, rules, pick, bullet)
        out.append(rewritten + end if rewritten else "")
    return " ".join(s for s in out if s)


def rewrite_style(text: str, style: str, seed: int = 0, catalog_dir: CatalogDir = None) -> str:
    """Rewrite a résumé's SUMMARY and experience bullets in ``style``; every other line is kept.

    ``neutral`` returns ``text`` unchanged. ``overstated`` inflates (power verbs, amplifiers,
    extra claims); ``understated`` deflates (hedges, humble verbs, metrics and impact clauses
    removed). The wording varies with ``seed`` and is identical between runs.
    """
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; expected one of {', '.join(STYLES)}")
    if style == "neutral":
        return text
    rules = _rules(catalog_dir)
    pick = _picker(seed, style)
    lines = text.split("\n")
    kinds = _line_kinds(lines, rules)
    out: list[str | None] = list(lines)
    summary_rows = []
    for i, (line, kind) in enumerate(zip(lines, kinds)):
        bullet = _BULLET.match(line)
        if kind == "experience" and bullet:
            marker, body, trail = bullet.groups()
            out[i] = marker + _rewrite_sentences(body, style, rules, pick, bullet=True) + trail
        elif kind == "summary" and line.strip():
            summary_rows.append(i)
            if bullet:
                marker, body, trail = bullet.groups()
                out[i] = marker + _rewrite_sentences(body, style, rules, pick, bullet=True) + trail
            else:
                indent = line[: len(line) - len(line.lstrip())]
                out[i] = indent + _rewrite_sentences(line, style, rules, pick, bullet=False)

    if summary_rows:
        first, key = summary_rows[0], lines[summary_rows[0]]
        if style == "overstated":
            # Only _keep_sentences drops a line (None); here every summary row still holds its text.
            out[first] = _join(pick(rules.summary_intro, "intro", key), out[first] or "")
            out[summary_rows[-1]] = _join(out[summary_rows[-1]] or "", pick(rules.summary_outro, "outro", key))
        else:
            kept = _keep_sentences(out, summary_rows, rules.under_summary_sentences)
            row = summary_rows[0] if kept is None else kept
            out[row] = _join(out[row] or "", pick(rules.under_outro, "outro", key))
    return "\n".join(line for line in out if line is not None)


def _keep_sentences(out: list[str | None], rows: list[int], limit: int) -> int | None:
    """Keep the first ``limit`` summary sentences, dropping emptied lines; the last kept row."""
    seen, last = 0, None
    for i in rows:
        line = out[i]
        assert line is not None  # summary rows hold text until this drops them
        take = [s for s in _SENTENCE_END.split(line.strip()) if s][: max(limit - seen, 0)]
        if not take:
            out[i] = None
            continue
        out[i] = line[: len(line) - len(line.lstrip())] + " ".join(take)
        seen += len(take)
        last = i
    return last


def _join(a: str, b: str) -> str:
    indent = a[: len(a) - len(a.lstrip())]
    return indent + " ".join(p for p in (a.strip(), b.strip()) if p)


# --------------------------------------------------------------------------- facts


def extract_facts(text: str, catalog_dir: CatalogDir = None) -> dict[str, list[str]]:
    """The lines the rewriter must never touch, parsed into facts.

    Keys: ``contact`` (lines before the first section), ``experience_headers`` (non-bullet
    lines of experience sections: titles, employers, places, dates), ``employers`` (first
    ``|`` field of each dated header line), ``dates`` (date ranges), ``education`` (lines),
    ``skills`` (items of the skills sections).
    """
    rules = _rules(catalog_dir)
    lines = text.split("\n")
    kinds = _line_kinds(lines, rules)
    facts: dict[str, list[str]] = {
        "contact": [],
        "experience_headers": [],
        "employers": [],
        "dates": [],
        "education": [],
        "skills": [],
    }
    for line, kind in zip(lines, kinds):
        stripped = line.strip()
        if not stripped or kind == "header":
            continue
        if kind == "contact":
            facts["contact"].append(stripped)
        elif kind == "experience" and not _BULLET.match(line):
            facts["experience_headers"].append(stripped)
            dates = _DATE_RANGE.findall(stripped)
            if dates:
                facts["dates"].extend(" ".join(d.split()) for d in dates)
                employer = stripped.split("|")[0] if "|" in stripped else _DATE_RANGE.split(stripped)[0]
                facts["employers"].append(employer.strip(" ,–—-"))
        elif kind == "education":
            facts["education"].append(stripped)
        elif kind == "skills":
            items = re.split(r"\s*[,;•|]\s*", _BULLET.sub(r"\2", stripped))
            facts["skills"].extend(item for item in items if item)
    return facts


def style_variants(base_resumes, seed: int = 0, catalog_dir: CatalogDir = None):
    """Every base résumé in each of ``STYLES`` by the offline rewriter (a ``StyleVariants`` table)."""
    import pandas as pd

    from resumebias_dagster.core.tables import StyleVariants, conform

    rows = [
        (
            resume.resume_id,
            original_idx,
            resume.seniority,
            style,
            rewrite_style(resume.text, style, seed=seed, catalog_dir=catalog_dir),
        )
        for original_idx, resume in enumerate(base_resumes.itertuples(index=False))
        for style in STYLES
    ]
    df = pd.DataFrame(rows, columns=["resume_id", "original_idx", "seniority", "style", "text"])
    return conform(df.astype({"original_idx": "int64"}), StyleVariants)


def resumes_with_differing_facts(style_variants) -> list[int]:
    """``original_idx`` of every résumé whose styles do not carry identical facts."""
    facts = style_variants["text"].map(lambda text: repr(extract_facts(text)))
    distinct = facts.groupby(style_variants["original_idx"]).nunique()
    return distinct[distinct > 1].index.tolist()
