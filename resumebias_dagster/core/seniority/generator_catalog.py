"""The offline generator's vocabulary, loaded from the catalog and checked before anything is drawn.

``occupations.yaml``, ``employers.yaml``, ``places.yaml`` and ``people.yaml``: a missing or
malformed entry is a ``CatalogError`` naming the file and the entry, and a name that is also an
ordinary word of the vocabulary is refused (replacing the name would change that word too).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from resumebias_dagster.catalog import CatalogError, load_yaml
from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.resumes.layout import MONTHS, SECTION_HEADERS

CatalogDir = str | os.PathLike | None


# Words the code itself writes into a résumé, besides the catalog vocabulary.
_CODE_WORDS = (
    *SECTION_HEADERS,
    *MONTHS,
    "Present",
    "Relevant coursework",
    "Certification",
    "linkedin com in",
    "less than one year 1 year years of professional experience",
)
_TOKEN = re.compile(r"[A-Za-z0-9]+")
_OCCUPATION_FIELDS = (
    "label",
    "noun",
    "work",
    "team_noun",
    "focus",
    "sectors",
    "titles",
    "degrees",
    "skills",
    "bullets",
)


@dataclass(frozen=True)
class GeneratorCatalog:
    occupations: dict[str, dict[str, Any]]
    common: dict[str, list[str]]
    summary: dict[str, Any]
    placeholders: dict[str, Any]
    career: dict[str, dict[str, Any]]
    progression: dict[str, dict[int, list[str]]]
    employers: dict[str, list[str]]
    employer_descriptions: dict[str, list[str]]
    employer_placeholders: dict[str, Any]
    cities: list[dict[str, Any]]
    schools: list[str]
    first_names: list[str]
    last_names: list[str]
    email_formats: list[str]
    email_domains: list[str]
    linkedin_formats: list[str]
    linkedin_probability: float


def _strings_in(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings_in(v)


def _tokens(texts: Iterable[str]) -> set[str]:
    return {t.lower() for text in texts for t in _TOKEN.findall(text)}


def _check_people(first: list[str], last: list[str], vocabulary: set[str]) -> None:
    for name in first + last:
        if not re.fullmatch(r"[A-Z][A-Za-z]+", name):
            raise CatalogError(
                f"people.yaml: {name!r} must be one capitalised word of letters (it becomes an e-mail address)"
            )
    for what, names in (("first_names", first), ("last_names", last)):
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise CatalogError(f"people.yaml: {what} lists {dupes} more than once")
    both = sorted({n.lower() for n in first} & {n.lower() for n in last})
    if both:
        raise CatalogError(f"people.yaml: {both} are both first and last names; e-mails would not be unique")
    clash = sorted({n.lower() for n in first + last} & vocabulary)
    if clash:
        raise CatalogError(
            f"people.yaml: {clash} also occur as ordinary words of the résumé vocabulary; "
            "replacing the name would change them too"
        )


def load_generator_catalog(catalog_dir: CatalogDir) -> GeneratorCatalog:
    occ = load_yaml("occupations.yaml", catalog_dir)
    emp = load_yaml("employers.yaml", catalog_dir)
    places = load_yaml("places.yaml", catalog_dir)
    people = load_yaml("people.yaml", catalog_dir)
    try:
        cat = GeneratorCatalog(
            occupations=occ["occupations"],
            common=occ["common"],
            summary=occ["summary"],
            placeholders=occ["placeholders"],
            career=occ["career"],
            progression={lvl: {int(k): v for k, v in m.items()} for lvl, m in occ["progression"].items()},
            employers=emp["sectors"],
            employer_descriptions=emp["descriptions"],
            employer_placeholders=emp["placeholders"],
            cities=places["cities"],
            schools=places["schools"],
            first_names=list(people["first_names"]),
            last_names=list(people["last_names"]),
            email_formats=list(people["email_formats"]),
            email_domains=list(people["email_domains"]),
            linkedin_formats=list(people["linkedin_formats"]),
            linkedin_probability=float(people["linkedin_probability"]),
        )
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise CatalogError(
            f"résumé catalog (occupations/employers/places/people.yaml): missing or malformed entry {exc!r}"
        ) from exc
    for key, spec in cat.occupations.items():
        for field in _OCCUPATION_FIELDS:
            if field not in spec:
                raise CatalogError(f"occupations.yaml: occupation {key!r} lacks {field!r}")
        for sector in spec["sectors"]:
            if sector not in cat.employers or sector not in cat.employer_descriptions:
                raise CatalogError(
                    f"occupations.yaml: occupation {key!r} names sector {sector!r}, "
                    "which lacks employers or descriptions in employers.yaml"
                )
        for level in ("intern", *SENIORITY_LEVELS):
            if not spec["titles"].get(level):
                raise CatalogError(f"occupations.yaml: occupation {key!r} has no {level!r} titles")
    for level in SENIORITY_LEVELS:
        if level not in cat.career or level not in cat.progression:
            raise CatalogError(f"occupations.yaml: career/progression lacks level {level!r}")
        lo, hi = cat.career[level]["positions"]
        for k in range(lo, hi + 1):
            if len(cat.progression[level].get(k, [])) != k:
                raise CatalogError(
                    f"occupations.yaml: progression.{level} needs a list of {k} levels for {k} positions"
                )
        needed = hi + (1 if cat.career[level]["internship_probability"] > 0 else 0)
        if len(cat.career[level]["bullets"]) < needed:
            raise CatalogError(f"occupations.yaml: career.{level}.bullets needs counts for {needed} positions")
    vocabulary = _tokens([*_strings_in(occ), *_strings_in(emp), *_strings_in(places), *_CODE_WORDS])
    _check_people(cat.first_names, cat.last_names, vocabulary)
    return cat
