"""The verdicts table: one row per finding of either study (core/inference/verdicts.py)."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.tables.base import PerModel

VERDICT_VALUES = ["beyond_noise", "equivalent", "within_noise", "inconclusive"]
# Criterion validity's verdicts: its 95% interval against chance (0.5) and the declared target
# (catalog/inference.yaml).
VALIDITY_VERDICT_VALUES = ["valid", "better than chance", "no better than chance", "worse than chance"]
FINDING_KINDS = [
    "style_shift",
    "seniority_bias",
    "inconsistency",
    "fit_delta",
    "impact_ratio",
    "criterion_validity",
    "validity_gap",
    "seniority_accuracy",
    "rank_difference",
]
CHANCE_SHARE = 0.5  # criterion validity at chance: pairs ordered at random
# Kinds of finding that are a share read against chance and a target, and their chance level:
# criterion validity (pairs ordered at random: 0.5) and the seniority task's accuracy (a label
# that ignores the résumé is right on a third of a design balanced over three levels).
CHANCE_KINDS = {"criterion_validity": CHANCE_SHARE, "seniority_accuracy": 1.0 / 3.0}
# Per study, the finding that answers "does it measure qualification?" and its kind: the fit
# task's criterion validity and the seniority task's accuracy (the report and the compliance
# files read these).
QUALIFICATION_FINDINGS = {
    "jd_audit": ("validity:criterion", "criterion_validity"),
    "seniority": ("validity:accuracy", "seniority_accuracy"),
}


class Verdicts(PerModel):
    """Per model and finding: estimate, 95% interval, test, adjusted p, equivalence, power, verdict."""

    # ranking: analyze-rank's verdicts of rankings made elsewhere (core/ranking/verdicts.py).
    study: Series[str] = pa.Field(isin=["seniority", "jd_audit", "ranking"])
    finding: Series[str]
    family: Series[str]
    description: Series[str]
    kind: Series[str] = pa.Field(isin=FINDING_KINDS)
    unit: Series[str]
    estimate: Series[float] = pa.Field(nullable=True)
    ci_low: Series[float] = pa.Field(nullable=True)
    ci_high: Series[float] = pa.Field(nullable=True)
    se: Series[float] = pa.Field(nullable=True, ge=0)
    df: Series[float] = pa.Field(nullable=True, ge=0)
    # The test's own p (the `test` column names it), then the family-adjusted p: at most alpha
    # exactly when the finding is beyond noise.
    p: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    q: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    # Two one-sided tests against the declared margin: below alpha, the margin is ruled out.
    tost_p: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    margin: Series[float] = pa.Field(gt=0)
    # Minimal detectable effect at the declared power (inf: the design cannot reach alpha).
    mde: Series[float] = pa.Field(nullable=True, ge=0)
    effect_to_detect: Series[float] = pa.Field(gt=0)
    power: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    n_resumes: Series[int] = pa.Field(ge=0)
    # The units the test counts: the résumés, or with one résumé its job descriptions or runs.
    n_units: Series[int] = pa.Field(ge=0)
    n_names: Series[int] = pa.Field(ge=0)
    test: Series[str]
    # The range one unit of the finding can take (a résumé's difference: -9 to 9 fit points),
    # where it has one: comparing two audits (core/history/changes.py) reads how far a change a
    # few résumés carry can reach.
    unit_low: Series[float] = pa.Field(nullable=True)
    unit_high: Series[float] = pa.Field(nullable=True)
    # The CHANCE_KINDS take VALIDITY_VERDICT_VALUES, every other kind VERDICT_VALUES.
    verdict: Series[str] = pa.Field(isin=VERDICT_VALUES + VALIDITY_VERDICT_VALUES)
    note: Series[str]

    @pa.dataframe_check(name="one_row_per_finding")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["model", "study", "finding"]).any()

    @pa.dataframe_check(name="interval_contains_estimate")
    def interval_contains_estimate(cls, df) -> Series[bool]:
        return df["ci_low"].isna() | (
            (df["ci_low"] <= df["estimate"] + 1e-9) & (df["estimate"] <= df["ci_high"] + 1e-9)
        )

    @pa.dataframe_check(name="verdict_agrees_with_interval")
    def verdict_agrees_with_interval(cls, df) -> Series[bool]:
        """Beyond noise only where the 95% interval excludes no effect (0; a ratio of 1)."""
        null = df["kind"].eq("impact_ratio").map({True: 1.0, False: 0.0})
        excludes = (df["ci_low"] >= null - 1e-9) | (df["ci_high"] <= null + 1e-9)  # at the bound: p = alpha
        return ~df["verdict"].eq("beyond_noise") | excludes

    @pa.dataframe_check(name="validity_verdict_agrees_with_interval")
    def validity_verdict_agrees_with_interval(cls, df) -> Series[bool]:
        """Criterion validity reads its interval: valid at or above the target (its margin),
        better / worse than chance wholly above / below 0.5, else no better than chance; and
        only criterion validity reads so."""
        share = df["kind"].isin(list(CHANCE_KINDS))
        chance = df["kind"].map(CHANCE_KINDS)
        low, high, v = df["ci_low"], df["ci_high"], df["verdict"]
        above, below = low > chance, high < chance
        agrees = (
            (v.eq("valid") & above & (low >= df["margin"]))
            | (v.eq("better than chance") & above & ~(low >= df["margin"]))
            | (v.eq("worse than chance") & below)
            | (v.eq("no better than chance") & ~above & ~below)
        )
        return (share & agrees) | (~share & ~v.isin(VALIDITY_VERDICT_VALUES))
