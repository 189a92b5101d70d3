"""Seeded synthetic résumés whose seniority is carried by facts only.

Years of experience, number of positions, titles, scope (team size, budget, reports) and
responsibilities (mentoring, hiring, strategy) differ by level; the level words themselves
never appear. All vocabulary lives in the catalog (``occupations.yaml``, ``employers.yaml``,
``places.yaml``, ``people.yaml``); this module only assembles it.

The facts of a résumé (``ResumeContent``) are written by ``render_resume`` (``core/resumes/layout.py``),
the one renderer of both generators: this template and a provider model's structured answer
(``core/seniority/llm_generation.py``), so the probe edits of ``core/jd_audit/probes/`` parse either.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass
from typing import Any

import pandas as pd

from resumebias_dagster.catalog import CatalogError
from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.resumes.layout import (
    COLUMNS,
    REFERENCE_INDEX,
    Degree,
    Position,
    ResumeContent,
    resume_row,
    years_phrase,
)
from resumebias_dagster.core.seniority.generator_catalog import CatalogDir, GeneratorCatalog, load_generator_catalog

# Placeholder specs keyed by seniority level (the rest are keyed by the career position).
_PLACEHOLDER_LEVELS = frozenset(SENIORITY_LEVELS)

# --------------------------------------------------------------------------- helpers


def _number(spec: dict[str, Any], rng: random.Random) -> Any:
    if "choices" in spec:
        return rng.choice(spec["choices"])
    return rng.randrange(spec["min"], spec["max"] + 1, spec.get("step", 1))


class _Filler:
    """Fills ``{placeholders}``: numbers drawn, words from context.

    A spec keyed by level is a scope figure (team size, budget): it is drawn once per level
    and résumé, so the summary and the bullets quote the same team and budget.
    """

    def __init__(self, specs: dict[str, Any], context: dict[str, str], rng: random.Random):
        self.specs = specs
        self.context = context
        self.rng = rng
        self.scope: dict[tuple[str, str], Any] = {}

    def __call__(self, template: str, level: str = "junior") -> str:
        values = {}
        for _, field, _, _ in string.Formatter().parse(template):
            if field is None or field in values:
                continue
            if field in self.context:
                values[field] = self.context[field]
                continue
            spec = self.specs.get(field)
            if spec is None:
                raise CatalogError(f"résumé catalog: unknown placeholder {{{field}}} in {template!r}")
            if _PLACEHOLDER_LEVELS & spec.keys():
                if (field, level) not in self.scope:
                    # A level without its own range takes the nearest lower one that has it.
                    known = [lvl for lvl in SENIORITY_LEVELS[: SENIORITY_LEVELS.index(level) + 1] if lvl in spec]
                    by_level = spec[known[-1]] if known else spec[min(spec.keys() & _PLACEHOLDER_LEVELS)]
                    self.scope[field, level] = _number(by_level, self.rng)
                values[field] = self.scope[field, level]
            else:
                values[field] = _number(spec, self.rng)
        return template.format_map(values)


def _draw(pools: list[list[str]], used: set[str], rng: random.Random, k: int) -> list[str]:
    """``k`` unused templates, taking from the first pool that still has some."""
    out: list[str] = []
    for pool in pools:
        free = [t for t in pool if t not in used]
        take = rng.sample(free, min(k - len(out), len(free)))
        used.update(take)
        out.extend(take)
        if len(out) == k:
            break
    return out


def _split_months(total: int, k: int, rng: random.Random) -> list[int]:
    """Lengths of ``k`` consecutive positions covering ``total`` months, each at least a year."""
    if k == 1:
        return [total]
    extra = total - 12 * k
    cuts = sorted(rng.randint(0, extra) for _ in range(k - 1))
    bounds = [0, *cuts, extra]
    return [12 + bounds[i + 1] - bounds[i] for i in range(k)]


# --------------------------------------------------------------------------- people


def _normal_name(name: str) -> str:
    return " ".join(name.split()).casefold()


def _draw_people(cat: GeneratorCatalog, n: int, seed: int, exclude: frozenset[str]) -> list[tuple[str, str]]:
    excluded = {_normal_name(x) for x in exclude}
    pairs = [
        (first, last)
        for first in cat.first_names
        for last in cat.last_names
        if _normal_name(f"{first} {last}") not in excluded
    ]
    if len(pairs) < n:
        raise ValueError(
            f"need {n} distinct people but people.yaml allows only {len(pairs)} after excluding "
            f"{len(excluded)} names; add first or last names"
        )
    return random.Random(f"people|{seed}").sample(pairs, n)


# --------------------------------------------------------------------------- one résumé


@dataclass(frozen=True)
class _Career:
    years: int
    months: int  # total months of employment, ending at the reference month
    levels: list[str]  # level of each position, oldest first
    lengths: list[int]  # months of each position, oldest first


def _career(cat: GeneratorCatalog, level: str, rng: random.Random) -> _Career:
    """How long the career is and how it splits into positions of rising level."""
    career = cat.career[level]
    years = rng.randint(*career["years"])
    total = years * 12 + rng.randint(0, 11) if years else rng.randint(3, 11)
    k = min(rng.randint(*career["positions"]), max(1, total // 12))
    levels = cat.progression[level].get(k)
    if levels is None:
        raise CatalogError(f"occupations.yaml: progression.{level} has no entry for {k} positions")
    return _Career(years, total, levels, _split_months(total, k, rng))


def _positions(
    cat: GeneratorCatalog,
    occ: dict[str, Any],
    c: _Career,
    *,
    employers: list[str],
    city: dict[str, Any],
    rng: random.Random,
) -> list[dict[str, Any]]:
    """The positions, newest first: contiguous months ending at the reference month."""
    positions: list[dict[str, Any]] = []
    end = REFERENCE_INDEX
    for i, (length, pos_level) in enumerate(zip(reversed(c.lengths), reversed(c.levels))):
        start = end - length + 1
        positions.append(
            {
                "title": rng.choice(occ["titles"][pos_level]),
                "employer": employers[i],
                "city": city["name"] if i == 0 or rng.random() < 0.6 else rng.choice(cat.cities)["name"],
                "start": start,
                "end": None if i == 0 else end,
                "level": pos_level,
            }
        )
        end = start - 1
    return positions


def _add_bullets(
    cat: GeneratorCatalog,
    occ: dict[str, Any],
    career: dict[str, Any],
    positions: list[dict[str, Any]],
    *,
    fill: _Filler,
    rng: random.Random,
    used: set[str],
) -> None:
    """Each position's bullets, drawn from the pools its level allows (no bullet twice)."""
    bullets = occ["bullets"]
    pools = {
        "junior": [bullets["tasks"]],
        "mid": [bullets["ownership"] + cat.common["ownership"], bullets["tasks"]],
        "senior": [bullets["leadership"] + cat.common["leadership"], bullets["ownership"], bullets["tasks"]],
    }
    for i, pos in enumerate(positions):
        count = rng.randint(*career["bullets"][i])
        if pos["level"] == "mid":
            # Ownership first, then day-to-day tasks, as a real résumé would order them.
            lead = max(1, count // 2)
            chosen = _draw(pools["mid"], used, rng, lead) + _draw(pools["mid"][1:], used, rng, count - lead)
        else:
            chosen = _draw(pools[pos["level"]], used, rng, count)
        pos["bullets"] = [fill(t, pos["level"]) for t in chosen]


def _internship(
    cat: GeneratorCatalog,
    occ: dict[str, Any],
    career: dict[str, Any],
    *,
    grad_year: int,
    employer: str,
    n_positions: int,
    fill: _Filler,
    rng: random.Random,
    used: set[str],
) -> dict[str, Any]:
    """A summer internship the year before graduation, after the regular positions."""
    intern_year = grad_year - 1
    return {
        "title": rng.choice(occ["titles"]["intern"]),
        "employer": employer,
        "city": rng.choice(cat.cities)["name"],
        "start": intern_year * 12 + 5,  # Jun
        "end": intern_year * 12 + 7,  # Aug
        "level": "junior",
        "bullets": [
            fill(t, "junior")
            for t in _draw([occ["bullets"]["tasks"]], used, rng, rng.randint(*career["bullets"][n_positions]))
        ],
    }


def _summary(
    cat: GeneratorCatalog,
    level: str,
    years: int,
    *,
    noun: str,
    focus: list[str],
    skills: list[str],
    fill: _Filler,
    rng: random.Random,
) -> str:
    sentences = [
        cat.summary["opening"].format(Noun=noun, years=years_phrase(years), focus1=focus[0], focus2=focus[1]),
        rng.choice(cat.summary["detail"]).format(focus3=focus[2], focus4=focus[3]),
        rng.choice(cat.summary["skills"]).format(skill1=skills[0], skill2=skills[1], skill3=skills[2]),
        fill(rng.choice(cat.summary["scope"][level]), level),
    ]
    if rng.random() < 0.7:
        sentences.append(rng.choice(cat.summary["closing"]))
    return " ".join(sentences)


def _contact(
    cat: GeneratorCatalog, first: str, last: str, city: dict[str, Any], rng: random.Random
) -> tuple[str, str, str]:
    """E-mail, phone (a 555-01xx number of the city's area code) and, sometimes, a LinkedIn URL."""
    local = rng.choice(cat.email_formats).format(first=first.lower(), last=last.lower())
    email = f"{local}@{rng.choice(cat.email_domains)}"
    phone = f"({city['area_code']}) 555-01{rng.randint(0, 99):02d}"
    linkedin = ""
    if rng.random() < cat.linkedin_probability:
        linkedin = rng.choice(cat.linkedin_formats).format(first=first.lower(), last=last.lower())
    return email, phone, linkedin


def _skills(occ: dict[str, Any], rng: random.Random) -> list[str]:
    """Eight to twelve of the occupation's skills, in catalog order."""
    picked = set(rng.sample(occ["skills"], rng.randint(min(8, len(occ["skills"])), min(12, len(occ["skills"])))))
    return [s for s in occ["skills"] if s in picked]


def _placeholder_specs(cat: GeneratorCatalog, occ: dict[str, Any]) -> dict[str, Any]:
    """The common placeholder ranges, with the occupation's own ranges merged over them."""
    specs = {**cat.placeholders}
    for name, spec in occ.get("placeholders", {}).items():
        specs[name] = {**specs.get(name, {}), **spec}
    return specs


def _education(
    cat: GeneratorCatalog, occ: dict[str, Any], degree: Degree, *, has_master: bool, rng: random.Random
) -> list[Degree]:
    """The highest degree, and below a master's the bachelor's two years earlier at another school."""
    education = [degree]
    if has_master:
        bachelor = rng.choice(occ["degrees"]["bachelor"])
        other_school = rng.choice([s for s in cat.schools if s != degree.school])
        education.append(Degree(bachelor, other_school, degree.year - 2))
    return education


def _work_history(
    cat: GeneratorCatalog,
    occ: dict[str, Any],
    career: dict[str, Any],
    c: _Career,
    *,
    employers: list[str],
    internship: bool,
    grad_year: int,
    city: dict[str, Any],
    fill: _Filler,
    rng: random.Random,
) -> list[dict[str, Any]]:
    """The positions with their bullets, newest first, then the internship if there is one."""
    positions = _positions(cat, occ, c, employers=employers, city=city, rng=rng)
    used: set[str] = set()
    _add_bullets(cat, occ, career, positions, fill=fill, rng=rng, used=used)
    if internship:
        positions.append(
            _internship(
                cat,
                occ,
                career,
                grad_year=grad_year,
                employer=employers[-1],
                n_positions=len(c.lengths),
                fill=fill,
                rng=rng,
                used=used,
            )
        )
    return positions


def _certifications(occ: dict[str, Any], career: dict[str, Any], rng: random.Random) -> list[str]:
    if occ.get("certifications") and rng.random() < career["certification_probability"]:
        return [rng.choice(occ["certifications"])]
    return []


def _employer_descriptions(
    cat: GeneratorCatalog, occ: dict[str, Any], positions: list[dict[str, Any]], rng: random.Random
) -> list[str]:
    """One description of each position's employer, from its sector's templates."""
    describe = _Filler(cat.employer_placeholders, {}, rng)
    sector_of = {e: sector for sector in occ["sectors"] for e in cat.employers[sector]}
    return [describe(rng.choice(cat.employer_descriptions[sector_of[p["employer"]]])) for p in positions]


def _position_texts(positions: list[dict[str, Any]], descriptions: list[str]) -> tuple[Position, ...]:
    return tuple(
        Position(p["title"], p["employer"], p["city"], p["start"], p["end"], tuple(p["bullets"]), description)
        for p, description in zip(positions, descriptions)
    )


def _resume(
    cat: GeneratorCatalog,
    occ_key: str,
    level: str,
    person: tuple[str, str],
    *,
    resume_id: str,
    rng: random.Random,
) -> dict[str, Any]:
    """One résumé row. The steps draw from ``rng`` in a fixed order, so a seed gives the same
    résumé it always gave (tests/core/seniority/test_generation.py pins the output)."""
    occ = cat.occupations[occ_key]
    career = cat.career[level]
    first, last = person
    c = _career(cat, level, rng)

    career_start = REFERENCE_INDEX - c.months + 1
    grad_index = career_start - rng.randint(1, 4)
    has_master = rng.random() < career["master_probability"]
    degree = rng.choice(occ["degrees"]["master" if has_master else "bachelor"])
    school = rng.choice(cat.schools)
    grad_year = grad_index // 12

    city = rng.choice(cat.cities)
    sector_employers = list(dict.fromkeys(e for s in occ["sectors"] for e in cat.employers[s]))
    internship = rng.random() < career["internship_probability"]
    employers = rng.sample(sector_employers, len(c.lengths) + int(internship))

    skills = _skills(occ, rng)
    focus = rng.sample(occ["focus"], 4)
    noun = occ["noun"][:1].upper() + occ["noun"][1:]
    context = {"team_noun": occ["team_noun"], "work": occ["work"], "degree": degree, "Noun": noun}
    fill = _Filler(_placeholder_specs(cat, occ), context, rng)

    positions = _work_history(
        cat,
        occ,
        career,
        c,
        employers=employers,
        internship=internship,
        grad_year=grad_year,
        city=city,
        fill=fill,
        rng=rng,
    )
    summary = _summary(cat, level, c.years, noun=noun, focus=focus, skills=skills, fill=fill, rng=rng)
    email, phone, linkedin = _contact(cat, first, last, city, rng)
    certifications = _certifications(occ, career, rng)
    # Drawn in the order the text reads (employer descriptions, an earlier degree, coursework).
    descriptions = _employer_descriptions(cat, occ, positions, rng)
    education = _education(cat, occ, Degree(degree, school, grad_year), has_master=has_master, rng=rng)
    coursework = rng.sample(occ["coursework"], 3) if level == "junior" and occ.get("coursework") else []

    content = ResumeContent(
        name=f"{first} {last}",
        email=email,
        phone=phone,
        city=city["name"],
        linkedin=linkedin,
        summary=summary,
        positions=_position_texts(positions, descriptions),
        education=tuple(education),
        # Catalog skills are written as they read mid-sentence; a skills list capitalises them.
        skills=tuple(s[:1].upper() + s[1:] for s in skills),
        coursework=tuple(coursework),
        certifications=tuple(certifications),
    )
    return resume_row(
        content,
        resume_id=resume_id,
        seniority=level,
        occupation=occ_key,
        first_name=first,
        last_name=last,
        years_experience=c.years,
        n_positions=len(c.lengths),
    )


# --------------------------------------------------------------------------- public


def occupation_labels(catalog_dir: CatalogDir = None) -> dict[str, str]:
    """Occupation code -> label, from the (validated) catalog."""
    return {key: str(spec["label"]) for key, spec in load_generator_catalog(catalog_dir).occupations.items()}


def generate_resumes(
    n_per_level: int = 40,
    seed: int = 0,
    catalog_dir: CatalogDir = None,
    exclude_people: frozenset[str] = frozenset(),
    id_prefix: str = "r",
) -> pd.DataFrame:
    """``3 * n_per_level`` synthetic résumés, levels interleaved (junior, mid, senior, junior, ...).

    Same seed, identical output; ``exclude_people`` lists full names that must not be used
    (e.g. the evaluation set's people when generating training data). Names are unique within
    one call and e-mail addresses derive from the name only.
    """
    if n_per_level < 0:
        raise ValueError(f"n_per_level must be >= 0, got {n_per_level}")
    cat = load_generator_catalog(catalog_dir)
    n_total = n_per_level * len(SENIORITY_LEVELS)
    people = _draw_people(cat, n_total, seed, frozenset(exclude_people))

    # Each level cycles through all occupations in a shuffled order, so levels are balanced.
    occupations_by_level = {}
    for level in SENIORITY_LEVELS:
        rng = random.Random(f"occupations|{seed}|{level}")
        order: list[str] = []
        while len(order) < n_per_level:
            keys = sorted(cat.occupations)
            rng.shuffle(keys)
            order += keys
        occupations_by_level[level] = order[:n_per_level]

    rows = []
    for i in range(n_total):
        level = SENIORITY_LEVELS[i % len(SENIORITY_LEVELS)]
        occ_key = occupations_by_level[level][i // len(SENIORITY_LEVELS)]
        rng = random.Random(f"resume|{seed}|{i}")
        rows.append(_resume(cat, occ_key, level, people[i], resume_id=f"{id_prefix}{i:04d}", rng=rng))
    df = pd.DataFrame(rows, columns=COLUMNS)
    return df.astype({"years_experience": "int64", "n_positions": "int64", "graduation_year": "int64"})
