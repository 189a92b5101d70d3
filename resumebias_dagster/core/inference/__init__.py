"""Inference both studies share: effects estimated within résumé with the résumé as the unit,
tests valid at the sample sizes run, multiplicity control over declared families,
equivalence tests against declared margins, power, and the verdict of each finding.
No Dagster import and nothing of either study: both studies build on it."""

from resumebias_dagster.core.inference.clustered import name_variance, paired, side_contrast, unit_spread
from resumebias_dagster.core.inference.estimate import Estimate, unseen_share
from resumebias_dagster.core.inference.multiplicity import bh_qvalues, family_adjusted, holm, simes
from resumebias_dagster.core.inference.randomization import run_permutation_p, sign_flip_p, smallest_p
from resumebias_dagster.core.inference.settings import (
    ALL_KINDS,
    CHANCE,
    KINDS,
    VALIDITY_KINDS,
    InferenceSettings,
    load_inference_settings,
)
from resumebias_dagster.core.inference.verdicts import (
    TESTS,
    VALIDITY_VERDICTS,
    VERDICTS,
    classify,
    findings,
    finish,
    missing_interval_lines,
    validity_words,
    verdict_records,
)

__all__ = [
    "ALL_KINDS",
    "CHANCE",
    "Estimate",
    "InferenceSettings",
    "KINDS",
    "TESTS",
    "VALIDITY_KINDS",
    "VALIDITY_VERDICTS",
    "VERDICTS",
    "bh_qvalues",
    "classify",
    "family_adjusted",
    "findings",
    "holm",
    "finish",
    "load_inference_settings",
    "name_variance",
    "paired",
    "run_permutation_p",
    "side_contrast",
    "sign_flip_p",
    "simes",
    "smallest_p",
    "unit_spread",
    "unseen_share",
    "missing_interval_lines",
    "validity_words",
    "verdict_records",
]
