"""The validity pairs' table (issue 42): résumé sets of a baseline and its twins, each twin one
edit away from the baseline, better, worse or equal by the job description's requirements."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.tables.base import StrictTable

VALIDITY_ROLES = ("baseline", "better", "worse", "equal")


class ValidityPairs(StrictTable):
    """Per (job description, base résumé, name group): a baseline and its twins, every text of
    the set carrying one name of the group; each twin differs from the baseline by one edit."""

    jd: Series[str]
    resume_id: Series[str]
    # The name group of the set (a level of the probe catalog's name axis) and the name written.
    group: Series[str]
    name: Series[str]
    # `<group>:baseline` or `<group>:<role>:<edit>`, unique within (jd, resume_id).
    variant: Series[str] = pa.Field(str_matches=r"^[a-z0-9_]+:(baseline|(better|worse|equal):[a-z_]+)$")
    role: Series[str] = pa.Field(isin=list(VALIDITY_ROLES))
    # skill, years, degree, reorder, a placebo op of the probe catalog, or `baseline`.
    edit: Series[str]
    detail: Series[str]
    text: Series[str] = pa.Field(str_length={"min_value": 100})
    # What the fit task reads of any variants table (core/jd_audit/fit_task.py).
    arm: Series[str] = pa.Field(isin=["validity"])
    axis: Series[str]
    level: Series[str]

    @pa.dataframe_check(name="one_baseline_per_set")
    def one_baseline(cls, df) -> bool:
        sets = df.groupby(["jd", "resume_id", "group"]).agg(
            baselines=("role", lambda r: int((r == "baseline").sum())), names=("name", "nunique")
        )
        return bool(((sets["baselines"] == 1) & (sets["names"] == 1)).all())

    @pa.dataframe_check(name="one_row_per_jd_resume_and_variant")
    def unique_rows(cls, df) -> bool:
        return not df.duplicated(["jd", "resume_id", "variant"]).any()

    @pa.dataframe_check(name="axis_is_edit_and_level_is_role")
    def fit_columns(cls, df) -> bool:
        return bool(((df["axis"] == df["edit"]) & (df["level"] == df["role"])).all())
