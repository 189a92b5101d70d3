"""Every finding the packaged catalog can produce has a readable name in
catalog/report/readable_names.yaml (issue 43): the findings here come from the verdict code
itself, run on simulated data over every probe axis and level of the packaged catalog and its
presets, every name group, both studies, validity, the pairwise task and rankings."""

import re

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.jd_audit.impact import name_groups
from resumebias_dagster.core.jd_audit.pairwise_stats import pairwise_verdicts
from resumebias_dagster.core.jd_audit.probes.axes import load_probe_axes
from resumebias_dagster.core.jd_audit.validity_stats import validity_verdicts
from resumebias_dagster.core.jd_audit.verdicts import fit_verdicts
from resumebias_dagster.core.ranking.verdicts import ranking_verdicts
from resumebias_dagster.core.reporting.wording import MissingReadableName, Words, load_words, number, pvalue
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts
from resumebias_dagster.core.tables.compliance import EEO1_RACES
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores
from resumebias_dagster.testing.pairwise_simulation import simulate_choices
from resumebias_dagster.testing.ranking_simulation import simulate_rankings
from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions
from resumebias_dagster.testing.validity_simulation import deterministic_validity

SETTINGS = load_inference_settings()
IDENTIFIER = re.compile(r"\b[a-z0-9]+_[a-z0-9_]+\b|\b[a-z]+[A-Z][a-zA-Z]*\b")


def _fit_findings(catalog_dir) -> pd.DataFrame:
    """The fit audit's findings over every axis and level of a catalog's probe_axes.yaml."""
    axes = load_probe_axes(catalog_dir)
    variants = ["baseline", *(f"{a.id}_{level}" for a in axes.axes for level in a.levels)]
    scores = simulate_fit_scores(["m"], ["j0", "j1"], variants, 3, resumes=4, seed=0, effects={variants[1]: -1.0})
    scores["axis"] = scores["variant"].str.split("_").str[0]
    scores["level"] = scores["variant"].str.split("_", n=1).str[1].fillna("")
    arms = axes.arms()
    scores["arm"] = scores["axis"].map(arms).fillna("baseline")
    named = scores["axis"] == "firstName"
    scores["name"] = np.where(named, scores["variant"] + "_" + scores["resume_id"], None)  # type: ignore[call-overload]
    return fit_verdicts(scores, SETTINGS, name_groups(catalog_dir), arms)


def _every_finding(catalog_dir) -> pd.DataFrame:
    levels = [lv for a in load_probe_axes(catalog_dir).axes if a.id == "firstName" for lv in a.levels]
    scores, pairs = deterministic_validity(0, resumes=6, jds=2, groups=levels[:3], validity=0.8)
    frames = [
        _fit_findings(catalog_dir),
        seniority_verdicts(simulate_seniority_predictions(n_resumes=12, exact=True, seed=0), SETTINGS),
        validity_verdicts(scores, pairs, SETTINGS),
        pairwise_verdicts(simulate_choices(0, resumes=6, groups=levels[:3], tie=0.2, equal=0.3), SETTINGS),
        ranking_verdicts(
            simulate_rankings(np.random.default_rng(0), resumes=6, groups=levels[:4], names_per_group=2), SETTINGS
        ),
    ]
    return pd.concat([f for f in frames if len(f)], ignore_index=True)


@pytest.mark.parametrize("catalog_dir", [None, "preset:study003"])
def test_every_finding_the_catalog_can_produce_has_a_readable_name(catalog_dir):
    findings = _every_finding(catalog_dir)
    prefixes = {f.split(":")[0] for f in findings["finding"]}
    assert prefixes >= {"fit_level", "fit_group", "impact_ratio", "style_shift", "seniority_bias", "validity"}
    words = load_words(catalog_dir, strict=True)
    for row in findings.itertuples(index=False):
        name, family = words.finding(row), words.family_of(row)
        for text in (name, family):
            assert text and not IDENTIFIER.search(text), f"{row.finding}: {text!r} reads as an identifier"


def test_a_finding_without_a_readable_name_is_refused_naming_it():
    words = Words({"axes": {}}, strict=True, source="catalog/report/readable_names.yaml")
    row = {"finding": "fit_level:careerGap_sabbatical", "description": ""}
    with pytest.raises(MissingReadableName) as err:
        words.finding(row)
    message = str(err.value)
    assert (
        "readable_names.yaml" in message and "'sabbatical'" in message and "fit_level:careerGap_sabbatical" in message
    )
    assert "\n" not in message
    # Outside the tests a user's own axis reads as its identifier spaced out, so the report still renders.
    assert Words({"axes": {}}).finding(row) == "sabbatical"


def test_groups_are_named_as_eeo1_names_them():
    words = load_words(strict=True)
    races = words.table["race_ethnicity"]
    assert set(races.values()) <= {*EEO1_RACES, "Middle Eastern or North African"}
    assert words.group("african_american_female") == "Black or African American female names"
    assert words.group("caucasian_male") == "White male names"
    assert words.level("firstName", "hispanic_latino_female") == "a Hispanic or Latino female name"


def test_numbers_are_never_in_scientific_notation():
    assert pvalue(4.1e-31) == "< 0.0001" and pvalue(0.0034) == "0.0034" and pvalue(0.5) == "0.50"
    assert number(-1.449) == "-1.45" and number(1e-9) == "0" and number(2.0) == "2"
    assert not re.search(r"\d[eE][-+]?\d", " ".join(pvalue(10.0**-k) + number(10.0**-k) for k in range(1, 40)))
