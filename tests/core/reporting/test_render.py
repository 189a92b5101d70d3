"""The audit report's HTML: numbers equal the tables they come from, untrusted text is
escaped, the diff shows only what changed, the summary says what was and was not measured."""

import re

import numpy as np
import pandas as pd

from resumebias_dagster.core.reporting.findings import headline_findings, not_measured
from resumebias_dagster.core.reporting.render import (
    BIAS_COLUMNS,
    IMPACT_COLUMNS,
    ReportTables,
    diff_hunks,
    render_report,
)
from resumebias_dagster.core.tables import (
    AuditVerdicts,
    FitAxisSummary,
    FitEffects,
    FitImpactRatios,
    FitModelSummary,
    ProbeVariants,
    SeniorityBiasSummary,
    SeniorityImpactRatios,
    empty_table,
)

PNG = b"\x89PNG\r\n\x1a\nnot-really-a-png"


def _bias_summary():
    t = empty_table(SeniorityBiasSummary)
    row = {c: np.nan for c in t.columns}
    row.update(model="m", variant_kind="style", name_scope=None, n=360, n_valid=360, n_invalid=0, n_runs=1,
               n_originals=120, n_inconsistent=49, inconsistency_rate=0.408333, accuracy=0.841667, rank_diff=0.15,
               n_dist=360, n_dist_originals=120)
    demo = dict(row, variant_kind="demographic", name_scope="everywhere", inconsistency_rate=0.0, n_inconsistent=0,
                racial_bias=0.0216667, racial_bias_floor=0.035, gender_bias=-0.08, gender_bias_floor=0.035,
                extreme_bias=-0.0016, extreme_bias_floor=0.049)
    return pd.DataFrame([row, demo])


def _groups():
    rows = [("m", "style", None, "style", style, 120, rank) for style, rank in
            (("neutral", 0.0), ("overstated", 0.342), ("understated", 0.108))]
    df = pd.DataFrame(rows, columns=["model", "variant_kind", "name_scope", "group_kind", "group", "n", "rank_diff"])
    return df.assign(accuracy=0.9, senior_share=0.3, junior_share=0.3)


def _tables(**overrides):
    base = dict(
        bias_summary=_bias_summary(), group_metrics=_groups(), seniority_impact=empty_table(SeniorityImpactRatios),
        fit_summary=empty_table(FitModelSummary), fit_axis_summary=empty_table(FitAxisSummary),
        fit_effects=empty_table(FitEffects), fit_impact=empty_table(FitImpactRatios),
        probe_variants=empty_table(ProbeVariants), verdicts=empty_table(AuditVerdicts),
        plots={"seniority_by_style": PNG}, models=[{"name": "m", "kind": "fine-tuned", "source": "pypi:x",
                                                    "resolved": "m@abc", "temperature": 0.0, "runs_per_cell": 1}],
        prompts={"seniority": "Classify <this> résumé"}, generated_at="2026-11-25 00:00 UTC", version="0.1.0",
    )
    base.update(overrides)
    return ReportTables(**base)


def _cells(html: str, table_id: str) -> list[tuple[str, str]]:
    body = re.search(rf'<table id="{table_id}">(.*?)</table>', html, re.S).group(1)
    return re.findall(r'data-col="([^"]+)" data-value="([^"]*)"', body)


def test_every_number_in_the_tables_is_the_stored_value():
    tables = _tables()
    html = render_report(tables)
    cells = _cells(html, "bias-summary")
    shown = [c.name for c in BIAS_COLUMNS]
    expected = []
    for record in tables.bias_summary[shown].itertuples(index=False):
        for name, value in zip(shown, record):
            ok = value is not None and not (isinstance(value, float) and np.isnan(value))
            expected.append((name, repr(value.item() if hasattr(value, "item") else value) if ok else ""))
    assert [(c, v.replace("&#39;", "'")) for c, v in cells] == expected
    assert ">40.8%<" in html and ">+0.150<" in html


def test_the_summary_speaks_plainly_and_beside_its_floors():
    findings = headline_findings(_bias_summary(), _groups(), empty_table(FitModelSummary),
                                 empty_table(SeniorityImpactRatios), empty_table(FitImpactRatios))["m"]
    assert findings[0] == "Overstated wording raises the predicted level by +0.34 levels (against the neutral text of the same résumé)."
    assert findings[1] == "Understated wording raises the predicted level by +0.11 levels (against the neutral text of the same résumé)."
    assert findings[2].startswith("40.8% of people get a different level depending on wording alone; no test-retest floor")  # no floors stored
    assert "racial +0.022 levels, caucasian minus african-american names (within its noise floor 0.035)" in findings[3]
    assert "gender -0.080 levels, male minus female names (beyond its noise floor 0.035)" in findings[3]


def test_what_was_not_measured_is_said():
    lines = not_measured(_bias_summary(), empty_table(FitModelSummary), empty_table(AuditVerdicts))
    assert lines == [
        "No fit scores: the job-description audit was not run.",
        "No LLM judge ran (none configured under `judges:` in the models config): the models' written "
        "justifications were not read.",
    ]


def test_the_file_is_self_contained_and_escapes_untrusted_text():
    hostile = '<script>alert("x")</script>'
    html = render_report(_tables(prompts={"seniority": hostile}))
    assert hostile not in html and "&lt;script&gt;" in html
    assert "data:image/png;base64," in html
    assert not re.search(r'(src|href)="https?://', html), "nothing is fetched when the report opens"
    assert "<script" not in html


def test_the_diff_shows_only_the_changed_words_with_a_little_context():
    base = "Jane Doe\nSUMMARY\nEngineer with nine years building payment systems in Denver, CO.\n"
    variant = base.replace("Denver, CO", "Lagos, Nigeria")
    hunks = diff_hunks(base, variant, context=2)
    assert len(hunks) == 1
    removed = [p["text"] for p in hunks[0] if p["kind"] == "removed"]
    added = [p["text"] for p in hunks[0] if p["kind"] == "added"]
    assert removed == ["Denver,", "CO."] and added == ["Lagos,", "Nigeria."]
    assert hunks[0][0] == {"kind": "same", "text": "systems in "}  # two words of context
    assert "Jane" not in "".join(p["text"] for p in hunks[0])
    assert diff_hunks(base, base) == []


def test_impact_tables_show_both_flags():
    assert {c.name for c in IMPACT_COLUMNS} >= {"below_four_fifths", "ci_below_four_fifths", "ci_low", "ci_high"}


def test_a_classifier_at_temperature_zero_is_read_against_its_exact_floor_of_zero():
    summary = _bias_summary()
    summary["exp_inconsistency_floor"] = 0.0
    findings = headline_findings(summary, _groups(), empty_table(FitModelSummary),
                                 empty_table(SeniorityImpactRatios), empty_table(FitImpactRatios))["m"]
    assert findings[2] == ("40.8% of people get a different level depending on wording alone; identical résumés "
                           "differ 0.0% (exact, from its label distributions) — beyond sampling noise.")
