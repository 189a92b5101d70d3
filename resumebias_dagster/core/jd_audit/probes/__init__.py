"""Single-signal variants of a résumé for the job-description audit (study 003).

Every variant differs from its baseline in exactly one signal: a name, a country, a school,
the employers, a gap, a hidden instruction, or (placebo arm) an edit that cannot matter.
Axes and levels are data (``catalog/probe_axes.yaml``, where the edits are described);
the edits read and rewrite the résumé layout of ``core/resumes/layout.py``; ``axes`` reads the
catalog, ``edits`` applies one level, ``variants`` builds and checks the variants table.

A variant is named ``<axis>_<level>`` (``addressCountry_brazil``, ``anonymize_all``);
axis ids have no underscore, so the axis is always the text before the first underscore.
The baseline row of each résumé is named ``baseline`` (arm and axis ``baseline`` too) and
is the base text plus the catalog's INTERESTS line, identical in every variant.

``check_probe_variants`` re-derives what each variant may change (the old and new values
of its signal, and the baseline lines that hold them) and diffs the texts token by token
and line by line (``verify_single_signal``): anything else that changed is reported.
"""

from resumebias_dagster.core.jd_audit.probes.axes import (
    GROUP_SEXES,
    axis_arms,
    load_probe_axes,
)
from resumebias_dagster.core.jd_audit.probes.terms import (
    ANONYMIZE_SIGNALS,
    ARMS,
    AXES_FILE,
    BASELINE,
    PLACEBO_OPS,
    PLACEHOLDERS,
    PROBLEM_COLUMNS,
    VARIANT_COLUMNS,
    Axis,
    ProbeAxes,
    Signal,
)
from resumebias_dagster.core.jd_audit.probes.variants import (
    DEFAULT_ARM,
    check_probe_variants,
    probe_variants,
    select_probe_resumes,
    verify_single_signal,
    with_baseline_additions,
)

__all__ = [
    "ANONYMIZE_SIGNALS",
    "ARMS",
    "AXES_FILE",
    "Axis",
    "BASELINE",
    "DEFAULT_ARM",
    "GROUP_SEXES",
    "PLACEBO_OPS",
    "PLACEHOLDERS",
    "PROBLEM_COLUMNS",
    "ProbeAxes",
    "Signal",
    "VARIANT_COLUMNS",
    "axis_arms",
    "check_probe_variants",
    "load_probe_axes",
    "probe_variants",
    "select_probe_resumes",
    "verify_single_signal",
    "with_baseline_additions",
]
