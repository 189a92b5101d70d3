"""Structured résumé answers of a fake generator model (the shape of notebook 004's JSON résumés)."""

from __future__ import annotations

import itertools
import json
import random
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from resumebias_dagster.testing.fake_providers.replies import FakeRequest, _default_answer

_LEVEL_ASKED = re.compile(r"for an? (junior|mid|senior)-level professional")
_TODAY_GIVEN = re.compile(r"Today is (\d{4})-(\d{2})")
_PEOPLE = [
    ("Rowan", "Castellano"),
    ("Quinn", "Okafor"),
    ("Harper", "Lindqvist"),
    ("Emerson", "Varga"),
    ("Sawyer", "Mbeki"),
    ("Marlow", "Tanaka"),
    ("Reese", "Albescu"),
    ("Tatum", "Ferreira"),
    ("Lennox", "Haddad"),
    ("Arden", "Kowalczyk"),
    ("Blair", "Nakamura"),
    ("Oakley", "Ruiz"),
]
_CITIES = [
    ("Denver, CO", 303),
    ("Raleigh, NC", 919),
    ("Columbus, OH", 614),
    ("Boise, ID", 208),
    ("Omaha, NE", 402),
    ("Tampa, FL", 813),
]
# Per occupation: titles (oldest to newest), employers, schools, degrees, skills, bullets.
_TRADES = {
    "software_engineer": {
        "noun": "Software engineer",
        "work": "backend services and developer tooling",
        "titles": ["Software Engineer", "Software Engineer II", "Staff Software Engineer", "Principal Engineer"],
        "intern": "Software Engineering Intern",
        "employers": [
            "Northwind Analytics",
            "Bluebird Payments",
            "Cobalt Health Systems",
            "Harborline Logistics",
            "Quarry Labs",
            "Tidewater Insurance",
        ],
        "schools": ["University of Colorado Boulder", "Ohio State University", "Georgia Institute of Technology"],
        "degrees": ["B.S. Computer Science", "M.S. Computer Science"],
        "skills": ["Python", "Go", "PostgreSQL", "Kubernetes", "AWS", "Terraform", "gRPC", "Kafka"],
        "bullets": [
            "Built a payments reconciliation service in Go that processes 2M events per day.",
            "Cut p95 API latency by 38% by adding read replicas and query caching.",
            "Migrated 14 services from VMs to Kubernetes with zero customer-facing downtime.",
            "Designed the internal feature-flag service used by 9 product teams.",
            "Wrote integration tests that raised coverage of the billing code from 41% to 83%.",
            "Led the on-call rotation redesign, reducing pages per week from 30 to 8.",
            "Reviewed pull requests and coached two new hires through their first quarter.",
            "Automated database schema migrations in the CI pipeline.",
        ],
    },
    "data_analyst": {
        "noun": "Data analyst",
        "work": "reporting and experimentation",
        "titles": ["Data Analyst", "Data Analyst II", "Analytics Lead", "Director of Analytics"],
        "intern": "Business Intelligence Intern",
        "employers": [
            "Meridian Retail Group",
            "Summit Credit Union",
            "Greenfield Foods",
            "Atlas Freight",
            "Lumen Media",
            "Cedar Health Partners",
        ],
        "schools": ["University of Minnesota", "Purdue University", "University of Arizona"],
        "degrees": ["B.S. Statistics", "M.S. Business Analytics"],
        "skills": ["SQL", "Python", "Tableau", "dbt", "Looker", "A/B testing", "Excel", "Snowflake"],
        "bullets": [
            "Built the weekly revenue dashboard read by 40 managers across 6 regions.",
            "Designed and analysed 25 pricing experiments, adding 3% to gross margin.",
            "Rebuilt 60 legacy reports as dbt models with documented definitions.",
            "Forecast store staffing needs, cutting overtime hours by 12%.",
            "Trained 15 colleagues in SQL through a six-week internal course.",
            "Automated the monthly board pack, saving 3 analyst days per month.",
        ],
    },
}


def _month_text(index: int) -> str:
    return f"{index // 12}-{index % 12 + 1:02d}"


def structured_resume(level: str, person: int, occupation: str, today: int, variant: int = 0) -> dict[str, Any]:
    """A realistic résumé as the structured generation prompt of ``core/seniority/llm_generation.py``
    asks for it: contiguous positions ending now, a degree just before the first one, the
    summary's years matching the positions. ``today`` counts months from year 0."""
    trade = _TRADES[occupation]
    rng = random.Random(f"{level}|{person}|{occupation}|{variant}")
    first, last = _PEOPLE[person % len(_PEOPLE)]
    city, area = _CITIES[(person + variant) % len(_CITIES)]
    lengths = {
        "junior": [rng.randint(9, 20)],
        "mid": [rng.randint(20, 30), rng.randint(24, 40)],
        "senior": [rng.randint(24, 36), rng.randint(30, 44), rng.randint(30, 48), rng.randint(20, 30)],
    }[level]
    title_of = {"junior": [0], "mid": [0, 1], "senior": [0, 1, 2, 3]}[level]
    employers = rng.sample(trade["employers"], len(lengths) + 1)
    bullets = itertools.cycle(rng.sample(trade["bullets"], len(trade["bullets"])))
    positions, end = [], today
    for k, length in enumerate(reversed(lengths)):
        start = end - length + 1
        positions.append(
            {
                "title": trade["titles"][title_of[len(lengths) - 1 - k]],
                "employer": employers[k],
                "city": city if k == 0 else rng.choice(_CITIES)[0],
                "start": _month_text(start),
                "end": "Present" if k == 0 else _month_text(end),
                "bullets": [next(bullets) for _ in range(3 if k else 4)],
            }
        )
        end = start - 1
    career_start = end + 1
    degree_year = career_start // 12 - (1 if career_start % 12 < 5 else 0)
    education = [{"degree": trade["degrees"][0], "school": rng.choice(trade["schools"]), "year": degree_year}]
    if level == "senior":
        schools = [s for s in trade["schools"] if s != education[0]["school"]]
        education = [
            {"degree": trade["degrees"][1], "school": schools[0], "year": degree_year},
            {"degree": trade["degrees"][0], "school": schools[1], "year": degree_year - 2},
        ]
    if level == "junior":
        positions.append(
            {
                "title": trade["intern"],
                "employer": employers[-1],
                "city": rng.choice(_CITIES)[0],
                "start": f"{degree_year - 1}-06",
                "end": f"{degree_year - 1}-08",
                "bullets": [next(bullets) for _ in range(2)],
            }
        )
    years = (today - career_start + 1) // 12
    phrase = "less than one year" if years == 0 else "1 year" if years == 1 else f"{years} years"
    return {
        "name": f"{first} {last}",
        "contact": {
            "email": f"{first.lower()}.{last.lower()}@example.com",
            "phone": f"({area}) 555-01{person % 100:02d}",
            "city": city,
            "linkedin": f"linkedin.com/in/{first.lower()}-{last.lower()}" if person % 2 else "",
        },
        "summary": f"{trade['noun']} with {phrase} of professional experience in {trade['work']}. "
        "Known for careful documentation and dependable delivery.",
        "positions": positions,
        "education": education,
        "skills": rng.sample(trade["skills"], 6),
        "certifications": ["AWS Certified Developer"] if occupation == "software_engineer" and person % 3 == 0 else [],
        "occupation": occupation,
        "seniority": level,
    }


def structured_resume_answers(
    occupations: tuple[str, ...] = ("software_engineer", "data_analyst"),
    fallback: Callable[[FakeRequest], str] = _default_answer,
) -> Callable[[FakeRequest], str]:
    """An ``answer`` for ``FakeProviderServer`` that writes a realistic JSON résumé
    (``structured_resume``) for each structured generation prompt, every other one in a
    ```json fence as chat models often add; other prompts go to ``fallback``. The k-th
    résumé of a level has ``occupations[k % len]``, whatever order concurrent calls arrive in."""
    lock = threading.Lock()
    people = itertools.count()
    per_level: Counter = Counter()

    def answer(request: FakeRequest) -> str:
        level = _LEVEL_ASKED.search(request.prompt)
        today = _TODAY_GIVEN.search(request.prompt)
        if not (level and today and '"positions"' in request.prompt):
            return fallback(request)
        with lock:
            person, k = next(people), per_level[level.group(1)]
            per_level[level.group(1)] += 1
        now = int(today.group(1)) * 12 + int(today.group(2)) - 1
        text = json.dumps(
            structured_resume(level.group(1), person, occupations[k % len(occupations)], now, k), indent=2
        )
        return f"```json\n{text}\n```" if person % 2 else text

    return answer
