"""The pairwise task's table (issue 42): two résumés of a validity set (its baseline and one
twin) shown with one job description, and the model's choice of the more qualified, or
neither (``core/jd_audit/pairwise.py``)."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.tables.base import PerModel

PAIRWISE_CHOICES = ("A", "B", "equal")
PAIRWISE_PICKS = ("twin", "baseline", "equal")


class PairwiseChoices(PerModel):
    """One row per (model, JD, validity set, twin, order shown, run): which of the two
    résumés (the set's baseline and one twin) the model called more qualified, or equal."""

    jd: Series[str]
    resume_id: Series[str]
    # The set's name group and name (both résumés carry it), and the twin (`<role>:<edit>`).
    group: Series[str]
    name: Series[str]
    twin: Series[str] = pa.Field(str_matches=r"^(better|worse|equal):[a-z_]+$")
    role: Series[str] = pa.Field(isin=["better", "worse", "equal"])
    edit: Series[str]
    # Where the twin was shown: A (first) or B; every pair is shown both ways in every run.
    twin_position: Series[str] = pa.Field(isin=["A", "B"])
    run: Series[int] = pa.Field(ge=0)
    # The answer read: the position chosen or "equal"; and what that is: the twin, the baseline or equal.
    choice: Series[str] = pa.Field(nullable=True, isin=list(PAIRWISE_CHOICES))
    picked: Series[str] = pa.Field(nullable=True, isin=list(PAIRWISE_PICKS))
    error: Series[str] = pa.Field(nullable=True)
    answer: Series[str] = pa.Field(nullable=True)
    resolved_model: Series[str] = pa.Field(nullable=True)
    latency_s: Series[float] = pa.Field(nullable=True, ge=0)
    # An embedded LLM's P(A), P(B), P(Equal) at its temperature (JSON list of three).
    p_choice: Series[str] = pa.Field(nullable=True, str_startswith="[")

    @pa.dataframe_check(name="rows_without_a_choice_say_why")
    def unchosen_explained(cls, df) -> Series[bool]:
        return df["choice"].notna() | df["error"].notna()

    @pa.dataframe_check(name="one_row_per_pair_order_and_run")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["model", "jd", "resume_id", "group", "twin", "twin_position", "run"]).any()
