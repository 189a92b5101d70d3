"""The user's own résumés (core/resumes/user_files.py) and which probes apply to each."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.common.labels import SENIORITY_LEVELS
from resumebias_dagster.core.tables.base import StrictTable


class UserResumes(StrictTable):
    """Résumés read from the user's files (PDF, DOCX, Markdown, text) or CSV: extracted text, the
    candidate's name as found, and the seniority label where the user gave one. Real résumés may
    say "Senior": unlike the generated ones, no level word is refused."""

    resume_id: Series[str] = pa.Field(unique=True, str_startswith="u-")
    source: Series[str]  # the file name, or "<csv>:row <n>"
    file_type: Series[str] = pa.Field(isin=["pdf", "docx", "md", "txt", "csv"])
    sha256: Series[str] = pa.Field(str_length={"min_value": 64, "max_value": 64})
    seniority: Series[str] = pa.Field(nullable=True, isin=list(SENIORITY_LEVELS))
    name: Series[str]
    first_name: Series[str]
    last_name: Series[str]
    name_line: Series[int] = pa.Field(ge=0)  # 1-based line of the name; 0 where given
    email: Series[str]
    phone: Series[str]
    text: Series[str] = pa.Field(str_length={"min_value": 1})


class ProbeApplicability(StrictTable):
    """Per user résumé and probe axis: whether every level of the axis edits the résumé as it
    edits a generated one (and passes the variant check), else the first reason it does not."""

    resume_id: Series[str]
    axis: Series[str]
    applies: Series[bool]
    reason: Series[str]

    @pa.dataframe_check()
    def probe_applicability_reason_when_not_applied(cls, df) -> Series[bool]:
        return df["applies"] | (df["reason"] != "")
