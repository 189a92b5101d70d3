"""Selection rates and impact ratios by perceived group, one table per study."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.tables.base import PerModel


class _ImpactRatios(PerModel):
    """Selection rates and impact ratios per (model, selection, dimension, group); see core/fairness/impact.py."""

    selection: Series[str]
    dimension: Series[str] = pa.Field(isin=["sex", "race_ethnicity", "intersection"])
    group: Series[str]
    sex: Series[str] = pa.Field(nullable=True)
    race_ethnicity: Series[str] = pa.Field(nullable=True)
    n: Series[int] = pa.Field(ge=0)
    # Individuals without a selection value: every run invalid, no recommendation, or (at or
    # above the true level) a junior résumé.
    n_excluded: Series[int] = pa.Field(ge=0)
    # An expected count where the model gives probabilities (the sum of the individuals' values).
    selected: Series[float] = pa.Field(ge=0)
    rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    reference_group: Series[str] = pa.Field(nullable=True)
    reference_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    impact_ratio: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    ci_low: Series[float] = pa.Field(nullable=True, ge=0)
    ci_high: Series[float] = pa.Field(nullable=True, ge=0)
    below_four_fifths: Series[bool]
    # The whole 95% interval below 0.8: a shortfall beyond sampling noise.
    ci_below_four_fifths: Series[bool]
    note: Series[str]
    # Names are a proxy for perceived group: every row says where its group comes from.
    group_source: Series[str] = pa.Field(str_contains="proxy")
    # The model versions the rows came from (one snapshot per analysis unit).
    resolved_models: Series[str] = pa.Field(nullable=True)

    @pa.dataframe_check(name="selected_within_n")
    def selected_within_n(cls, df) -> Series[bool]:
        return df["selected"] <= df["n"] + 1e-9

    @pa.dataframe_check(name="ci_contains_ratio")
    def ci_contains_ratio(cls, df) -> Series[bool]:
        return df["ci_low"].isna() | (
            (df["ci_low"] <= df["impact_ratio"] + 1e-9) & (df["impact_ratio"] <= df["ci_high"] + 1e-9)
        )

    @pa.dataframe_check(name="flag_is_ratio_below_four_fifths")
    def flag_is_ratio_below_four_fifths(cls, df) -> Series[bool]:
        # A ratio of 0.8 up to rounding may go either way here (the flag is computed exactly).
        near = (df["impact_ratio"] - 0.8).abs() < 1e-9
        return near | (df["below_four_fifths"] == (df["impact_ratio"] < 0.8))

    @pa.dataframe_check(name="interval_flag_implies_flag")
    def interval_flag_implies_flag(cls, df) -> Series[bool]:
        return ~df["ci_below_four_fifths"] | (df["below_four_fifths"] & (df["ci_high"] < 0.8))

    @pa.dataframe_check(name="one_row_per_group")
    def one_row_per_group(cls, df) -> bool:
        return not df.duplicated(["model", "selection", "dimension", "group"]).any()


class SeniorityImpactRatios(_ImpactRatios):
    """Seniority study, name experiment: selected = predicted senior, or at or above the true level."""

    selection: Series[str] = pa.Field(isin=["predicted_senior", "at_or_above_true_level"])


class FitImpactRatios(_ImpactRatios):
    """Job-description audit, name variants: selected = recommend yes, or score at or above a cut."""

    selection: Series[str] = pa.Field(str_matches=r"^(recommend_yes|score_at_least_[0-9.]+)$")
