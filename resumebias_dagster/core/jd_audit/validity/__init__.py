"""Validity pairs (issue 42): does a screener score the better candidate higher?

From each base résumé, job description and name group: a baseline carrying one name of the
group, and twins one edit away, better or worse by the job description's stated requirements
(a required skill, years in the current role, a degree level, a certification) or equal (two skills of the same
weight swapped, a placebo edit). ``edits`` makes each twin, ``pairs`` builds the table and drops a
twin the probes' one-signal check refuses, ``check`` checks a stored table.
"""

from resumebias_dagster.core.jd_audit.validity.check import check_validity_pairs
from resumebias_dagster.core.jd_audit.validity.edits import YEARS_STEP, NotApplicable, Twin
from resumebias_dagster.core.jd_audit.validity.pairs import (
    ARM,
    JOB_EDITS,
    PAIR_COLUMNS,
    PROBLEM_COLUMNS,
    SKIPPED_COLUMNS,
    skip_summary,
    twin_problems,
    validity_pairs,
)

__all__ = [
    "ARM",
    "JOB_EDITS",
    "NotApplicable",
    "PAIR_COLUMNS",
    "PROBLEM_COLUMNS",
    "SKIPPED_COLUMNS",
    "Twin",
    "YEARS_STEP",
    "check_validity_pairs",
    "skip_summary",
    "twin_problems",
    "validity_pairs",
]
