"""The audit report's HTML: numbers equal the tables they come from, untrusted text is
escaped, the diff shows only what changed, the summary says what was and was not measured."""

import re

import numpy as np
import pandas as pd

from resumebias_dagster.core.inference import load_inference_settings
from resumebias_dagster.core.reporting.findings import headline_findings, not_measured
from resumebias_dagster.core.reporting.render import (
    BIAS_COLUMNS,
    IMPACT_COLUMNS,
    ReportTables,
    diff_hunks,
    render_report,
)
from resumebias_dagster.core.seniority.verdicts import seniority_verdicts
from resumebias_dagster.core.tables import (
    FitAxisSummary,
    FitEffects,
    FitImpactRatios,
    FitModelSummary,
    JudgeVerdicts,
    ProbeVariants,
    SeniorityBiasSummary,
    SeniorityImpactRatios,
    Verdicts,
    empty_table,
)
from resumebias_dagster.testing.seniority_simulation import simulate_seniority_predictions

PNG = b"\x89PNG\r\n\x1a\nnot-really-a-png"


def _bias_summary():
    t = empty_table(SeniorityBiasSummary)
    row = {c: np.nan for c in t.columns}
    row.update(
        model="m",
        variant_kind="style",
        name_scope=None,
        n=360,
        n_valid=360,
        n_invalid=0,
        n_runs=1,
        n_originals=120,
        n_inconsistent=49,
        inconsistency_rate=0.408333,
        accuracy=0.841667,
        rank_diff=0.15,
        n_dist=360,
        n_dist_originals=120,
    )
    demo = dict(
        row,
        variant_kind="demographic",
        name_scope="everywhere",
        inconsistency_rate=0.0,
        n_inconsistent=0,
        racial_bias=0.0216667,
        racial_bias_floor=0.035,
        gender_bias=-0.08,
        gender_bias_floor=0.035,
        extreme_bias=-0.0016,
        extreme_bias_floor=0.049,
    )
    return pd.DataFrame([row, demo])


def _groups():
    rows = [
        ("m", "style", None, "style", style, 120, rank)
        for style, rank in (("neutral", 0.0), ("overstated", 0.342), ("understated", 0.108))
    ]
    df = pd.DataFrame(rows, columns=["model", "variant_kind", "name_scope", "group_kind", "group", "n", "rank_diff"])
    return df.assign(accuracy=0.9, senior_share=0.3, junior_share=0.3)


def _tables(**overrides):
    base = dict(
        bias_summary=_bias_summary(),
        group_metrics=_groups(),
        seniority_impact=empty_table(SeniorityImpactRatios),
        fit_summary=empty_table(FitModelSummary),
        fit_axis_summary=empty_table(FitAxisSummary),
        fit_effects=empty_table(FitEffects),
        fit_impact=empty_table(FitImpactRatios),
        probe_variants=empty_table(ProbeVariants),
        judge_verdicts=empty_table(JudgeVerdicts),
        verdicts=empty_table(Verdicts),
        plots={"seniority_by_style": PNG},
        models=[
            {
                "name": "m",
                "kind": "fine-tuned",
                "source": "pypi:x",
                "resolved": "m@abc",
                "temperature": 0.0,
                "runs_per_cell": 1,
            }
        ],
        prompts={"seniority": "Classify <this> résumé"},
        generated_at="2026-11-25 00:00 UTC",
        version="0.1.0",
    )
    base.update(overrides)
    return ReportTables(**base)


def _tool_section(html: str, model: str) -> str:
    """A tool's section of the report (its first screen and its details)."""
    start = html.index(f'<section class="tool" id="tool-{model}">')
    return html[start : html.index("</section>", start)]


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


def _verdicts(**kwargs):
    verdicts = seniority_verdicts(simulate_seniority_predictions(**kwargs), load_inference_settings())
    return verdicts[verdicts["kind"] != "impact_ratio"]  # the t-based findings; impact ratios read as ratios


def test_the_summary_says_what_was_found_ruled_out_and_undecided_with_what_could_be_detected():
    planted = _verdicts(
        n_resumes=150,  # ruling out ±0.05 levels takes 146 résumés (core/inference: unseen résumés)
        exact=True,
        name_sd=0.05,
        seed=2,
        style_effects={"overstated": 0.8},
        group_effects={"african_american_female": -0.5, "african_american_male": -0.5},
    )
    sections = headline_findings(planted)["sim"]
    assert list(sections) == ["found", "ruled_out", "undecided"]
    found = " ".join(sections["found"])
    assert "overstated minus neutral wording of the same résumé: +0." in found and "95% CI" in found
    assert "adjusted p" in found
    assert any(
        line.startswith("male minus female names") and "is ruled out" in line and "±0.05 levels" in line
        for line in sections["ruled_out"]
    )
    noisy = headline_findings(_verdicts(n_resumes=12, runs=2, exact=False, seed=3))["sim"]
    assert noisy["undecided"], "a small noisy study leaves things undecided"
    assert all(
        "the smallest effect it could detect with 80% power is" in line or "could not be tested" in line
        for line in noisy["undecided"]
    )


def test_the_report_shows_the_summary_and_every_verdict():
    verdicts = _verdicts(n_resumes=30, exact=True, seed=1, style_effects={"overstated": 0.8})
    html = render_report(_tables(verdicts=verdicts))
    assert "Found (beyond noise)" in html and "Not decided by this study" in html
    cells = _cells(html, "verdicts-tool-sim")  # the full table, in the tool's details
    assert [v.replace("&#39;", "'") for c, v in cells if c == "verdict"] == [repr(v) for v in verdicts["verdict"]]


def test_what_was_not_measured_is_said():
    lines = not_measured(_bias_summary(), empty_table(FitModelSummary), empty_table(JudgeVerdicts))
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


def _validity(model: str, validity: float, seed: int = 0) -> pd.DataFrame:
    from resumebias_dagster.core.jd_audit.validity_stats import validity_verdicts
    from resumebias_dagster.testing.validity_simulation import deterministic_validity

    scores, pairs = deterministic_validity(seed, resumes=60, validity=validity, model=model)
    return validity_verdicts(scores, pairs, load_inference_settings())


def test_the_report_leads_with_whether_the_model_measures_qualification():
    bias = _verdicts(n_resumes=30, exact=True, seed=1, style_effects={"overstated": 0.8})  # model "sim"
    verdicts = pd.concat([_validity("sim", 0.5), _validity("good", 1.0), bias], ignore_index=True)
    html = render_report(_tables(verdicts=verdicts))
    good, sim = _tool_section(html, "good"), _tool_section(html, "sim")
    # The first question of each tool's first screen, before what moved its answers.
    assert sim.index("Does it tell better from worse candidates?") < sim.index("What moved its answers")
    assert "Fit scores (job-description audit): Valid:" in good
    assert "No better than chance" in sim and "its bias figures describe noise" in sim
    assert "its bias figures describe noise" not in good
    # Both of sim's tasks: its fit scores at chance, its seniority labels read from the résumés.
    assert "Fit scores (job-description audit): No better" in sim and "Seniority labels: " in sim
    assert "of the texts at their true level" in sim and "chance is 33%" in sim
    # The warning is on the bias findings of the task the model does at chance, and only there:
    # sim reads seniority better than chance, so its seniority findings carry none.
    sections = headline_findings(verdicts)
    assert set(sections) == {"sim"}  # validity findings are not bias findings
    lines = [line for part in sections["sim"].values() for line in part]
    assert lines and not any(line.endswith("its bias figures describe noise.") for line in lines)
    fit_bias = bias[bias["study"] == "seniority"].assign(study="jd_audit", model="sim")
    lines = [
        line
        for part in headline_findings(pd.concat([_validity("sim", 0.5), fit_bias])).values()
        for line in part.values()
    ]
    flat = [line for part in lines for line in part]
    assert flat and all(line.endswith("its bias figures describe noise.") for line in flat)


def test_a_labeller_at_chance_has_the_warning_on_its_seniority_findings():
    from resumebias_dagster.testing.seniority_validity_calibration import labeller_predictions

    preds = labeller_predictions(0, resumes=60, how="ignores", mix=(0.2, 0.5, 0.3), stick=0.8)
    verdicts = seniority_verdicts(preds, load_inference_settings())
    html = render_report(_tables(verdicts=verdicts))
    section = _tool_section(html, "sim")
    assert "No better than chance: its seniority labels do not follow the résumés&#39; true levels." in section
    lines = [line for part in headline_findings(verdicts)["sim"].values() for line in part]
    assert lines and all(line.endswith("its bias figures describe noise.") for line in lines)


def test_a_report_without_validity_pairs_says_so():
    verdicts = _verdicts(n_resumes=30, exact=True, seed=1)
    verdicts = verdicts[~verdicts["finding"].str.startswith("validity:")]
    html = render_report(_tables(verdicts=verdicts))
    assert "Seniority labels: not measured in this run; no seniority labels of résumés with a known level" in html
