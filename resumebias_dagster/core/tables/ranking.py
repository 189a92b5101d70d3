"""The ranking task's tables: each ranking a model gave, and the selection rates and position
bias read from them (``core/ranking/``)."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.tables.base import PerModel


class _PerModelAndJD(PerModel):
    """Rows per (model, job description, ...): the model's name, then the JD's."""

    jd: Series[str]


class Rankings(_PerModelAndJD):
    """One row per (model, JD, ranking item, run): the names in the order shown, each name's
    group, and the model's ranking of them (best first, possibly partial) or why there is none."""

    # "<resume_id>/r<rotation>": one base résumé under every group's name, in one rotation.
    item_id: Series[str]
    resume_id: Series[str]
    rotation: Series[int] = pa.Field(ge=0)
    run: Series[int] = pa.Field(ge=0)
    # JSON lists: the names in the order shown, and each one's group (parallel to shown).
    shown: Series[str] = pa.Field(str_startswith="[")
    groups: Series[str] = pa.Field(str_startswith="[")
    # JSON list of the names ranked, best first; null when the answer gave no ranking.
    ranked: Series[str] = pa.Field(nullable=True, str_startswith="[")
    first: Series[str] = pa.Field(nullable=True)
    error: Series[str] = pa.Field(nullable=True)
    answer: Series[str] = pa.Field(nullable=True)
    resolved_model: Series[str] = pa.Field(nullable=True)
    latency_s: Series[float] = pa.Field(nullable=True, ge=0)
    # An embedded LLM's P(ranked first) of each shown name (JSON, parallel to shown).
    p_first: Series[str] = pa.Field(nullable=True, str_startswith="[")

    @pa.dataframe_check(name="rows_without_a_ranking_say_why")
    def unranked_explained(cls, df) -> Series[bool]:
        return df["ranked"].notna() | df["error"].notna()

    @pa.dataframe_check(name="one_row_per_item_and_run")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["model", "jd", "item_id", "run"]).any()


class RankingSelection(_PerModelAndJD):
    """Per (model, JD, group): how often the group's candidate was ranked first and in the top
    k, over the valid rankings, and the impact ratios against the highest group."""

    group: Series[str]
    n_rankings: Series[int] = pa.Field(ge=0)
    n_candidates: Series[int] = pa.Field(ge=0)
    # The rotation balances this across groups: equal counts mean no group was helped by order.
    shown_first: Series[int] = pa.Field(ge=0)
    ranked_first: Series[int] = pa.Field(ge=0)
    selection_rate: Series[float] = pa.Field(ge=0, le=1)
    # The mean of 1/N: what a model blind to everything would give.
    chance_rate: Series[float] = pa.Field(gt=0, le=1)
    top_k: Series[int] = pa.Field(ge=1)
    # Rankings naming at least min(k, N) candidates: those that say who is in the top k.
    n_top_k: Series[int] = pa.Field(ge=0)
    in_top_k: Series[int] = pa.Field(ge=0)
    top_k_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    impact_ratio: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    top_k_impact_ratio: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    reference_group: Series[str] = pa.Field(nullable=True)
    below_four_fifths: Series[bool]
    # The base résumés behind the group (the unit of the interval; 0 where rows name none).
    n_resumes: Series[int] = pa.Field(ge=0)
    # The impact ratio's 95% interval and p-value with the base résumé as the unit
    # (core/ranking/tables.py); null for the reference group's p, one résumé, or no résumé ids.
    impact_ratio_ci_low: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    impact_ratio_ci_high: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    impact_ratio_p_value: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    # The whole interval under 0.8: below the four-fifths line beyond the design's noise.
    ci_below_four_fifths: Series[bool]
    # The mean P(ranked first) where the model gives one (an embedded LLM): the exact
    # expectation of the sampled selection rate.
    exp_selection_rate: Series[float] = pa.Field(nullable=True, ge=0, le=1)
    # Rankings of the (model, JD) without a ranking (failed calls, unparsable answers).
    n_errors: Series[int] = pa.Field(ge=0)

    @pa.dataframe_check(name="counts_within_candidates")
    def counts_within_candidates(cls, df) -> Series[bool]:
        return (
            (df["ranked_first"] <= df["n_candidates"])
            & (df["shown_first"] <= df["n_candidates"])
            & (df["in_top_k"] <= df["n_top_k"])
        )

    @pa.dataframe_check(name="one_row_per_group")
    def one_row_per_group(cls, df) -> bool:
        return not df.duplicated(["model", "jd", "group"]).any()


class RankingPositions(_PerModelAndJD):
    """Per (model, JD, shown position): how often the candidate shown there was ranked first
    (position bias), against chance."""

    position: Series[int] = pa.Field(ge=1)
    n_rankings: Series[int] = pa.Field(ge=0)
    ranked_first: Series[int] = pa.Field(ge=0)
    share_first: Series[float] = pa.Field(ge=0, le=1)
    chance_rate: Series[float] = pa.Field(gt=0, le=1)
    exp_share_first: Series[float] = pa.Field(nullable=True, ge=0, le=1)

    @pa.dataframe_check(name="one_row_per_position")
    def one_row_per_position(cls, df) -> bool:
        return not df.duplicated(["model", "jd", "position"]).any()
