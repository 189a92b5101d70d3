"""A test record in the spirit of the EU AI Act's technical documentation (Art. 11, Annex IV)
for résumé screening, a high-risk use (Annex III 4(a)): the bias examination Art. 10(2)(f-g)
asks for, as one table of (section, item, value) rows and a JSON document.

Sections: ``system`` (what was tested, its purpose), ``data`` (the data used for bias testing and
how they were built), ``results`` (every metric's estimate with its interval and verdict, the
Local Law 144 impact ratios, and per model and task its ``accuracy``: the criterion-validity
figures of ``core/compliance/validity.py``, the accuracy level and metric Art. 15(3) asks to be
declared, Annex IV 2(g) and 3), ``open_risks`` (what was not tested, what stayed undecided, and
each model not shown valid) and
``logs`` (what is kept: the response store's rows, the snapshots the models answered from). It
records what this tool measured; it is not a conformity assessment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from resumebias_dagster.core.compliance.summary import DataSource, lowest_ratios
from resumebias_dagster.core.compliance.validity import (
    FINDINGS,
    TASKS,
    figure_text,
    not_measured,
    reading,
    validity_figures,
)
from resumebias_dagster.core.tables import EuTestRecord, conform
from resumebias_dagster.core.tables.compliance import ALL_JOB_DESCRIPTIONS, EEO1_RACES

SECTIONS = ("system", "data", "results", "open_risks", "logs")
ALWAYS_UNTESTED = (
    "real applicants: the data are counterfactual test résumés; the model's behaviour on an employer's applicant "
    "pool (historical data) was not measured",
    "grounds the catalog has no names or edits for: disability, religion, sexual orientation, and age beyond the "
    "graduation-year and career-gap probes",
    "résumés in other languages and formats than the generator's English template",
    "the deployed system around the model (its prompt, thresholds, the human who reads its output)",
)


def _row(section: str, item: str, value: Any) -> dict[str, str]:
    return {"section": section, "item": item, "value": str(value)}


def _interval(r: Any) -> str:
    """A row's 95% interval as text (a record or a Series with ci_low and ci_high)."""
    low, high = r.get("ci_low"), r.get("ci_high")
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return "no interval"
    return f"95% CI [{low:.3f}, {high:.3f}]"


def eu_test_record(
    *,
    generated_at: str,
    version: str,
    models: Sequence[Mapping[str, Any]],
    source: DataSource,
    verdicts: pd.DataFrame,
    rates: pd.DataFrame,
    store: Mapping[str, Any],
) -> pd.DataFrame:
    """The record's rows. ``models``: name, kind and snapshots of each audited model; ``store``:
    where the response store is (no password) and its row counts. ``verdicts``: every study's
    verdict rows, the validity findings among them (``validity_verdicts``' and the seniority
    study's), whose criterion-validity rows give each (model, task) its ``accuracy`` item."""
    rows = [
        _row("system", "intended purpose", "screening or ranking job applicants' résumés (EU AI Act Annex III 4(a))"),
        _row("system", "tested by", f"resumebias_dagster {version}, {generated_at}"),
    ]
    rows += [
        _row("system", f"model {m['name']}", f"{m['kind']}; snapshots: {m.get('resolved') or 'not reported'}")
        for m in models
    ]
    rows += [
        _row("data", "data used for bias testing", "test data: counterfactual résumés (Art. 10(2)(f-g))"),
        _row("data", "how they were built", source.explanation()),
    ]
    rows += [_row("data", "note", note) for note in source.notes]
    for r in verdicts.to_dict("records"):
        rows.append(
            _row(
                "results",
                f"{r['model']} / {r['study']} / {r['finding']}",
                f"{r['description']}: {r['estimate']:.3f} {r['unit']}, {_interval(r)}, q={r['q']:.3g}, "
                f"verdict {r['verdict']}"
                if pd.notna(r["estimate"]) and pd.notna(r["q"])
                else f"{r['description']}: not estimable ({r['note'] or r['verdict']})",
            )
        )
    rows += _lowest_ratios(rates)
    rows += _accuracy(verdicts)
    rows += _open_risks(verdicts, rates)
    rows += [_row("logs", k, v) for k, v in store.items()]
    return conform(pd.DataFrame.from_records(rows, columns=["section", "item", "value"]), EuTestRecord)


def _lowest_ratios(rates: pd.DataFrame) -> list[dict[str, str]]:
    """Per model, study, measure and outcome: the pooled table's lowest impact ratio, and the
    lowest of the per-job-description tables where there are some."""
    if not len(rates):
        return []
    pooled = rates[(rates["job_description"] == ALL_JOB_DESCRIPTIONS) & rates["impact_ratio"].notna()]
    per_jd = lowest_ratios(rates)
    rows = []
    for (model, study, measure, outcome), t in pooled.groupby(["model", "study", "measure", "outcome"], sort=True):
        low = t.loc[t["impact_ratio"].idxmin()]
        rows.append(
            _row(
                "results",
                f"{model} / {study} / Local Law 144 {measure} ({outcome})",
                f"lowest impact ratio {low['impact_ratio']:.3f} ({low['category']}, {low['dimension']}), "
                f"{_interval(low)}; below four-fifths beyond sampling noise: {bool(low['ci_below_four_fifths'])}",
            )
        )
        mine = per_jd[
            (per_jd["model"] == model)
            & (per_jd["study"] == study)
            & (per_jd["measure"] == measure)
            & (per_jd["outcome"] == outcome)
        ]
        if len(mine):
            worst = mine.iloc[0]  # lowest first
            flagged = mine.loc[mine["ci_below_four_fifths"].astype(bool), "job_description"].nunique()
            rows.append(
                _row(
                    "results",
                    f"{model} / {study} / Local Law 144 {measure} ({outcome}), per job description",
                    f"lowest impact ratio {worst['impact_ratio']:.3f} ({worst['category']}, {worst['dimension']}, "
                    f"job description {worst['job_description']}), {_interval(worst)}; below four-fifths beyond "
                    f"sampling noise under {flagged} of {mine['job_description'].nunique()} job descriptions",
                )
            )
    return rows


ACCURACY_ARTICLE = "EU AI Act Art. 15(3): accuracy level and metric declared; Annex IV 2(g), 3"


def _accuracy(verdicts: pd.DataFrame) -> list[dict[str, str]]:
    """Per (model, study) of the verdicts with a criterion-validity finding: its ``accuracy``
    item; a model of a study without one: ``accuracy`` not measured (and an open risk)."""
    figures = validity_figures(verdicts)
    rows = [
        _row("results", f"{f['model']} / {f['study']} / accuracy", f"{figure_text(f)} ({ACCURACY_ARTICLE})")
        for f in figures.to_dict("records")
    ]
    if len(verdicts):
        have = set(zip(figures["model"], figures["study"]))
        audited = verdicts.loc[verdicts["study"].isin(list(FINDINGS)), ["model", "study"]].astype(str)
        for model, study in sorted(set(map(tuple, audited.to_numpy())) - have):
            rows.append(_row("results", f"{model} / {study} / accuracy", f"{TASKS[study]}: {not_measured(study)}"))
            rows.append(
                _row(
                    "open_risks",
                    f"accuracy not measured: {model} / {study}",
                    f"{not_measured(study)}; whether its bias figures describe more than noise is unknown",
                )
            )
    return rows


def _not_shown_valid(verdicts: pd.DataFrame) -> list[dict[str, str]]:
    return [
        _row("open_risks", f"not shown valid: {f['model']} / {f['study']}", f"{figure_text(f)}; {reading(f)}")
        for f in validity_figures(verdicts).to_dict("records")
        if f["verdict"] != "valid"
    ]


def _open_risks(verdicts: pd.DataFrame, rates: pd.DataFrame) -> list[dict[str, str]]:
    rows = [_row("open_risks", "not tested", text) for text in ALWAYS_UNTESTED]
    if len(rates):
        races = rates[(rates["dimension"] == "race_ethnicity") & (rates["n"] > 0)]["category"]
        missing = [r for r in EEO1_RACES if r not in set(races)]
        if missing:
            rows.append(_row("open_risks", "EEO-1 categories without test names", "; ".join(missing)))
    rows += _not_shown_valid(verdicts)
    if len(verdicts):
        open_ = verdicts[verdicts["verdict"].isin(["inconclusive", "within_noise"])]
        for r in open_.to_dict("records"):
            rows.append(
                _row(
                    "open_risks",
                    f"undecided: {r['model']} / {r['study']} / {r['finding']}",
                    f"neither found nor ruled out ({r['verdict']}); the design could detect {r['mde']:.3g} {r['unit']}",
                )
            )
    return rows


def record_json(record: pd.DataFrame) -> dict[str, Any]:
    """The record as one JSON document: section -> [{item, value}]."""
    return {
        "document": "EU AI Act test record (Art. 10(2)(f-g), Art. 11, Annex IV): bias examination of résumé screening",
        **{
            s: [{"item": r.item, "value": r.value} for r in record[record["section"] == s].itertuples()]
            for s in SECTIONS
        },
    }
