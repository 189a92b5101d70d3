"""A timeline problem the baseline already has is not new in a variant that renames the employers.

``check_probe_variants`` reports the timeline problems a variant adds to its baseline's. The
messages name the employers, so comparing them as text read an overlap or gap of the baseline
as new once companyNames (or anonymisation) renamed the employers in it.
"""

import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.probes import BASELINE, check_probe_variants, probe_variants
from resumebias_dagster.core.resumes.timeline import timeline_issues, timeline_problems
from resumebias_dagster.core.seniority.generation import generate_resumes


@pytest.fixture(scope="module")
def senior():
    base = generate_resumes(1, seed=7)
    return base[base["seniority"] == "senior"].iloc[0]


def with_overlap_and_gap(text: str) -> str:
    """The senior résumé of seed 7 with its second position overlapping the newest one and a
    three-month unexplained gap before the second position."""
    assert "Oct 2015 – May 2022" in text and "Mar 2009 – Sep 2015" in text
    return text.replace("Oct 2015 – May 2022", "Oct 2015 – Dec 2022").replace(
        "Mar 2009 – Sep 2015", "Mar 2009 – Jun 2015"
    )


def test_a_baseline_overlap_and_gap_are_not_new_in_a_renamed_variant(senior):
    rows = pd.DataFrame({"resume_id": ["r"], "text": [with_overlap_and_gap(senior["text"])]})
    variants = probe_variants(rows, ["companyNames"])
    baseline = variants.loc[variants["variant"] == BASELINE, "text"].iloc[0]
    before = timeline_problems(baseline)
    assert any("overlaps or follows" in p for p in before), before
    assert any("unexplained gap of 3 months" in p for p in before), before
    renamed = variants.loc[variants["variant"] == "companyNames_faang", "text"].iloc[0]
    after = timeline_problems(renamed)
    # The messages name the new employers, the keys do not.
    assert set(after) != set(before)
    assert [i.key for i in timeline_issues(renamed)] == [i.key for i in timeline_issues(baseline)]
    problems = check_probe_variants(variants, ["companyNames"])
    assert problems.empty, problems.to_dict("records")


def test_a_problem_the_variant_adds_is_still_reported(senior):
    variants = probe_variants(pd.DataFrame({"resume_id": ["r"], "text": [senior["text"]]}), ["companyNames"])
    at = variants["variant"] == "companyNames_mid_tier"
    variants.loc[at, "text"] = variants.loc[at, "text"].str.replace("Oct 2015 – May 2022", "Oct 2015 – Dec 2022")
    problems = check_probe_variants(variants, ["companyNames"])
    timeline = problems.loc[problems["problem"].str.startswith("timeline: "), "problem"].tolist()
    assert timeline
    assert any("Shopify (Oct 2015 – Dec 2022) overlaps or follows Stripe (Jun 2022 – Present)" in p for p in timeline)
    assert set(problems["variant"]) == {"companyNames_mid_tier"}


def test_the_messages_stay_as_they_were(senior):
    issues = timeline_issues(with_overlap_and_gap(senior["text"]))
    assert [i.message for i in issues] == timeline_problems(with_overlap_and_gap(senior["text"]))
    assert [i.kind for i in issues][:2] == ["overlap", "gap_between"]
