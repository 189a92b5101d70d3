"""Audits over time (issue 44): the snapshots of completed audits and what changed between two."""

from __future__ import annotations

import pandera.pandas as pa
from pandera.typing.pandas import Series

from resumebias_dagster.core.tables.base import PerModel
from resumebias_dagster.core.tables.verdicts import Verdicts


class AuditSnapshots(PerModel):
    """One row per snapshot: a model's verdicts of one completed audit, kept as they were
    (core/history/store.py never updates or deletes one), with what identifies the audit."""

    snapshot_id: Series[str] = pa.Field(unique=True)
    created_at: Series[str]  # ISO 8601, UTC
    # The model's resolved snapshot(s) or an HTTP tool's version, as the audit recorded them ("" if none).
    tool_version: Series[str]
    design: Series[str]  # JSON: studies, résumés behind a finding, runs per cell, job descriptions
    prompts_sha: Series[str]  # SHA-256 of the prompts the audit used
    code_version: Series[str]
    content_sha: Series[str]  # SHA-256 of the verdict rows: an identical re-run adds no snapshot
    n_findings: Series[int] = pa.Field(ge=0)
    n_beyond_noise: Series[int] = pa.Field(ge=0)


class AuditChanges(Verdicts):
    """Per model and finding of both snapshots: the later audit's estimate minus the earlier's,
    with its interval and verdict (beyond noise: changed; equivalent: unchanged within the
    margin; else not decided), core/history/changes.py."""

    snapshot_id: Series[str]
    base_snapshot_id: Series[str]
    base_estimate: Series[float] = pa.Field(nullable=True)
    new_estimate: Series[float] = pa.Field(nullable=True)


class FindingUnits(PerModel):
    """One row per (finding, résumé, job description) of an audit: the finding's unit there (a
    level: the change it made to that résumé's text under that job description, its value, the
    exact expectation or the mean of valid runs, minus its baseline's; a name group contrast:
    the mean of the group's names' texts minus the names it is compared with), with the name it
    carried (a contrast: the names it was drawn from, "; "-joined).
    Two audits' units on the same résumés compare the finding résumé by résumé (paired,
    core/history/changes.py)."""

    study: Series[str]
    finding: Series[str]
    resume_id: Series[str]
    jd: Series[str]
    name: Series[str] = pa.Field(nullable=True)
    unit: Series[float]
