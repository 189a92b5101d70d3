"""The impact-ratio tables of both studies, materialised from small real prediction and score
tables (stored partition by partition) into a real DuckDB file."""

import dagster as dg
import duckdb
import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.tables import SeniorityPredictions, Verdicts, conform
from resumebias_dagster.defs.jd_audit import fit
from resumebias_dagster.defs.jd_audit.impact_ratios import fit_impact_ratios
from resumebias_dagster.defs.seniority_study import metrics, predictions
from resumebias_dagster.defs.seniority_study.impact_ratios import (
    seniority_impact_ratios,
)
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from resumebias_dagster.schemas import FitScoresType, SeniorityPredictionsType, VerdictsType
from tests.defs.stored_columns import assert_stored_columns_match

MODELS = dg.StaticPartitionsDefinition(["m1", "m2"])
MODEL_JD = dg.MultiPartitionsDefinition(
    {"model": dg.StaticPartitionsDefinition(["judge"]), "jd": dg.StaticPartitionsDefinition(["j1", "j2"])}
)
DEMOGRAPHICS = ["caucasian_male", "caucasian_female", "african_american_male", "african_american_female"]
# An imported seed file (model m3): senior for the two male names only.
SOCIAL_CSV = "original_idx,true_seniority,demographic,name,model,prediction,correct\n" + "".join(
    f"{i},senior,{d},Name {d},m3,{'senior' if d.endswith('_male') else 'mid'},False\n"
    for i in range(2)
    for d in DEMOGRAPHICS
)


def _predictions(model: str) -> pd.DataFrame:
    """m1: every name predicted senior on 4 résumés but african_american_female on 2 of 4.
    m2: two provider snapshots, so the tables show it as m2@snap-a and m2@snap-b."""
    rows = []
    for i in range(4):
        for d in DEMOGRAPHICS:
            senior = d != "african_american_female" or i < 2
            rows.append(
                {
                    "variant_kind": "demographic",
                    "original_idx": i,
                    "variant": d,
                    "model": model,
                    "run": 0,
                    "prediction": "senior" if senior else "junior",
                    "true_seniority": "mid",
                    "resolved_model": ("snap-a" if i < 2 else "snap-b") if model == "m2" else f"{model}-v1",
                    "latency_s": 0.1,
                    "error": None,
                }
            )
    return pd.DataFrame(rows)


@dg.asset(
    name="seniority_predictions",
    partitions_def=MODELS,
    metadata={"partition_expr": "model"},
    dagster_type=SeniorityPredictionsType,
)
def stored_predictions(context: dg.AssetExecutionContext) -> pd.DataFrame:
    return conform(_predictions(context.partition_key), SeniorityPredictions)


def _scores(jd: str) -> pd.DataFrame:
    """One base résumé, 3 runs per name and JD: Aisha Okonkwo gets "maybe" and 6, every other
    name "yes" and 8; the baseline "yes" and 8 too. Study 003's six names: the study003 preset."""
    rows = []
    for variant in [
        "baseline",
        "firstName_james_smith",
        "firstName_sarah_smith",
        "firstName_mohammed_al_said",
        "firstName_aisha_okonkwo",
        "firstName_wei_chen",
        "firstName_maria_rodriguez",
    ]:
        axis, _, level = variant.partition("_")
        low = level == "aisha_okonkwo"
        for run in range(3):
            rows.append(
                {
                    "model": "judge",
                    "jd": jd,
                    "resume_id": "r1",
                    "variant": variant,
                    "arm": "baseline" if variant == "baseline" else "probe",
                    "axis": axis,
                    "level": level or "baseline",
                    "name": level.replace("_", " ").title().replace("Al Said", "Al-Said") if level else None,
                    "run": run,
                    "score": 6.0 if low else 8.0,
                    "recommend": "maybe" if low else "yes",
                    "justification": "ok",
                    "strengths": "a",
                    "concerns": "b",
                    "resolved_model": "judge-v1",
                    "latency_s": 0.2,
                    "error": None,
                    "expected_score": np.nan,
                    "score_distribution": None,
                    "note": None,
                }
            )
    return pd.DataFrame(rows)


@dg.asset(
    name="fit_scores",
    partitions_def=MODEL_JD,
    metadata={"partition_expr": {"model": "model", "jd": "jd"}},
    dagster_type=FitScoresType,
)
def stored_scores(context: dg.AssetExecutionContext) -> pd.DataFrame:
    return _scores(context.partition_key.keys_by_dimension["jd"])


@dg.asset(name="validity_verdicts", dagster_type=VerdictsType)
def planted_validity_verdicts() -> pd.DataFrame:
    """The judge's criterion validity, as validity_verdicts states it: no better than chance."""
    from tests.core.compliance.test_validity_figures import verdict

    row = verdict("judge", "jd_audit", "validity:criterion", "criterion_validity", 0.55, 0.4, 0.7, "no better than chance", margin=0.9, n=6)  # fmt: skip
    return conform(pd.DataFrame([row]), Verdicts)


@pytest.fixture
def stored(tmp_path, monkeypatch):
    """A DuckDB file holding both prediction partitions and both fit-score partitions."""
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    resources = {
        "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
        "catalog": CatalogResource(catalog_dir="preset:study003"),
    }
    for model in MODELS.get_partition_keys():
        assert dg.materialize([stored_predictions], partition_key=model, resources=resources).success
    for jd in ("j1", "j2"):
        key = dg.MultiPartitionKey({"model": "judge", "jd": jd})
        assert dg.materialize([stored_scores], partition_key=key, resources=resources).success
    csv = tmp_path / "social.csv"
    csv.write_text(SOCIAL_CSV)
    return tmp_path, resources, csv


def _row(table, model, selection, dimension, group):
    hit = table[
        (table["model"] == model)
        & (table["selection"] == selection)
        & (table["dimension"] == dimension)
        & (table["group"] == group)
    ]
    assert len(hit) == 1
    return hit.iloc[0]


def test_both_impact_tables_materialise_into_duckdb(stored):
    tmp_path, resources, csv = stored
    assets = [
        stored_predictions,
        stored_scores,
        predictions.imported_predictions,
        seniority_impact_ratios,
        fit_impact_ratios,
        fit.fit_effects,
    ]
    result = dg.materialize(
        assets,
        selection=[predictions.imported_predictions, seniority_impact_ratios, fit_impact_ratios, fit.fit_effects],
        resources=resources,
        run_config={
            "ops": {
                "imported_predictions": {"config": {"import_paths": [str(csv)]}},
                "fit_impact_ratios": {"config": {"score_cut": 6}},
            }
        },
    )
    assert result.success
    with duckdb.connect(str(tmp_path / "study.duckdb"), read_only=True) as con:
        seniority = con.execute("select * from audit.seniority_impact_ratios").df()
        fit_table = con.execute("select * from audit.fit_impact_ratios").df()
        effects = con.execute("select * from audit.fit_effects").df()

    # Seniority: m1's african_american_female is senior on 2 of 4 résumés, the others on 4 of 4.
    aaf = _row(seniority, "m1", "predicted_senior", "intersection", "african_american_female")
    assert (aaf["n"], aaf["selected"], aaf["rate"], aaf["impact_ratio"]) == (4, 2, 0.5, 0.5)
    assert aaf["below_four_fifths"] and aaf["ci_low"] < 0.5 < aaf["ci_high"]
    assert aaf["reference_group"] == "african_american_male"  # first of the tied groups at rate 1
    female = _row(seniority, "m1", "predicted_senior", "sex", "female")
    assert (female["n"], female["selected"], female["impact_ratio"]) == (8, 6, 0.75)
    assert female["below_four_fifths"]
    # The imported file (m3) is analysed beside the partitions; m2's two snapshots stay apart.
    assert set(seniority["model"]) == {"m1", "m2@snap-a", "m2@snap-b", "m3"}
    assert _row(seniority, "m3", "predicted_senior", "sex", "female")["rate"] == 0
    assert set(seniority.loc[seniority["model"] == "m2@snap-b", "resolved_models"]) == {"snap-b"}
    assert set(seniority["selection"]) == {"predicted_senior", "at_or_above_true_level"}
    assert seniority["group_source"].str.contains("proxy for perceived group").all()

    # Fit audit over both JDs: Aisha Okonkwo (black, female) is never recommended. The
    # individuals are name variants (one résumé, two JDs); their three runs are averaged.
    black = _row(fit_table, "judge", "recommend_yes", "race_ethnicity", "black")
    assert (black["n"], black["selected"], black["impact_ratio"], black["below_four_fifths"]) == (2, 0, 0.0, True)
    assert black["ci_low"] == 0 or np.isnan(black["ci_low"])  # one résumé: no interval across résumés
    sex = _row(fit_table, "judge", "recommend_yes", "sex", "female")  # Sarah, Aisha, Maria
    assert (sex["n"], sex["selected"]) == (6, 4)
    assert sex["impact_ratio"] == pytest.approx(2 / 3)
    # score_cut 6 from the run config: Aisha's 6 counts as selected.
    assert set(fit_table["selection"]) == {"recommend_yes", "score_at_least_6"}
    assert _row(fit_table, "judge", "score_at_least_6", "race_ethnicity", "black")["rate"] == 1
    assert fit_table["group_source"].str.contains("proxy").all()

    # Item 11: the effects table has each cell's recommend rate beside its score delta.
    aisha = effects[(effects["variant"] == "firstName_aisha_okonkwo") & (effects["jd"] == "j1")].iloc[0]
    assert (aisha["delta"], aisha["baseline_recommend_rate"], aisha["variant_recommend_rate"]) == (-2, 1, 0)
    assert aisha["recommend_rate_delta"] == -1
    assert {"seniority_impact_ratios", "fit_impact_ratios", "fit_effects", "seniority_predictions", "fit_scores"} <= (
        assert_stored_columns_match(tmp_path / "study.duckdb")
    )


def test_tables_are_empty_before_any_prediction(tmp_path, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    resources = {
        "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
        "catalog": CatalogResource(catalog_dir="preset:study003"),
    }
    derived = [
        seniority_impact_ratios,
        fit_impact_ratios,
        metrics.seniority_group_metrics,
        metrics.seniority_bias_summary,
        fit.fit_effects,
        fit.fit_model_summary,
        fit.fit_axis_summary,
    ]
    assets = [stored_predictions, stored_scores, predictions.imported_predictions, *derived]
    result = dg.materialize(assets, selection=assets[2:], resources=resources)
    assert result.success
    for asset in derived:
        assert len(result.output_for_node(asset.key.path[-1])) == 0, asset.key
    # An empty table is stored with the same columns as a full one (issue 12).
    checked = assert_stored_columns_match(tmp_path / "study.duckdb")
    assert {a.key.path[-1] for a in derived} <= checked


def test_an_import_never_materialised_reads_as_no_import(stored):
    # `resumebias run` never materialises imported_predictions (it is filled on request only):
    # the study's tables must still be computed from the model partitions.
    tmp_path, resources, _ = stored
    derived = [metrics.seniority_group_metrics, metrics.seniority_bias_summary, seniority_impact_ratios]
    assets = [stored_predictions, predictions.imported_predictions, *derived]
    result = dg.materialize(assets, selection=derived, resources=resources)
    assert result.success
    assert "m1" in set(result.output_for_node("seniority_bias_summary")["model"])
    assert "m1" in set(result.output_for_node("seniority_impact_ratios")["model"])


def test_local_law_144_summary_and_eu_record_from_both_studies(stored, monkeypatch):
    """bias_audit_rates, bias_audit_summary and eu_ai_act_record from the stored partitions:
    every field the rules list is in the published JSON, the CSV holds every rate row, and the
    record has each of its sections."""
    import json

    from resumebias_dagster.core.compliance.summary import CONDITIONAL_FIELDS, SUMMARY_FIELDS
    from resumebias_dagster.core.tables.compliance import ALL_JOB_DESCRIPTIONS
    from resumebias_dagster.defs.jd_audit.verdicts import fit_verdicts
    from resumebias_dagster.defs.report import compliance, history
    from resumebias_dagster.defs.seniority_study.resumes import base_resumes
    from resumebias_dagster.defs.seniority_study.verdicts import seniority_verdicts
    from resumebias_dagster.resources.providers import ProvidersResource

    tmp_path, resources, _ = stored
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    resources = {**resources, "providers": ProvidersResource(store_path=str(tmp_path / "responses.sqlite"))}
    built = [
        base_resumes,
        predictions.imported_predictions,
        metrics.seniority_bias_summary,
        seniority_verdicts,
        fit.fit_effects,
        fit.fit_model_summary,
        fit_verdicts,
        planted_validity_verdicts,
        compliance.bias_audit_rates,
        history.audit_snapshots,
        compliance.bias_audit_summary,
        compliance.eu_ai_act_record,
    ]
    result = dg.materialize(
        [stored_predictions, stored_scores, *built],
        selection=built,
        resources=resources,
        run_config={
            "ops": {
                "base_resumes": {"config": {"n_per_level": 1, "seed": 7}},
                "bias_audit_summary": {"config": {"tool_name": "=ScreenBot", "distribution_date": "2026-01-15"}},
            }
        },
    )
    assert result.success
    rates = result.output_for_node("bias_audit_rates")
    assert {"m1", "m2@snap-a", "m2@snap-b", "judge"} <= set(rates["model"])
    assert set(rates["measure"]) == {"scoring_rate", "selection_rate"}
    # m1: the African American female names get senior on 2 of 4 résumés, the others on 4 of 4.
    aaf = rates[
        (rates["model"] == "m1")
        & (rates["outcome"] == "senior")
        & (rates["category"] == "Black or African American Female")
    ].iloc[0]
    assert (aaf["n"], aaf["n_selected"], aaf["rate"], aaf["impact_ratio"]) == (4, 2, 0.5, 0.5)

    # The judge's fit scores span two job descriptions: a table for each beside the pooled one.
    judged = rates[rates["model"] == "judge"]
    assert set(judged["job_description"]) == {ALL_JOB_DESCRIPTIONS, "j1", "j2"}
    summary = result.output_for_node("bias_audit_summary")
    # Produced from each model's audit snapshot, dated by it; a first audit has no prior one.
    snapshots = result.output_for_node("audit_snapshots")
    assert set(summary["snapshot_id"]) == set(snapshots["snapshot_id"])
    assert (summary["prior_snapshot_id"] == "").all() and (summary["prior_audit_date"] == "").all()
    assert set(summary["audit_date"]) == {snapshots["created_at"].iloc[0][:10]}
    judge = summary[summary["model"] == "judge"].iloc[0]
    assert judge["tool"] == "=ScreenBot (judge-v1)" and judge["distribution_date"] == "2026-01-15"
    assert "test data" in judge["data_source"] and "seed 7" in judge["data_explanation"]
    # Study 003's Mohammed Al-Said is perceived Middle Eastern: no EEO-1 category, so unknown.
    # Six individuals (one résumé under six names), each counted once though scored under two
    # job descriptions.
    assert judge["n_unknown_race_ethnicity"] == 1 and judge["n_individuals"] == 6
    assert "averaged over 2 job descriptions and 3 valid runs" in judge["individuals_note"]
    assert judge["min_share"] == 0 and judge["excluded_categories"] == "" and judge["exclusion_justification"] == ""
    # Beyond the law: the judge's criterion validity, from validity_verdicts.
    assert (judge["validity_share"], judge["validity_verdict"], judge["validity_n_resumes"]) == (
        0.55,
        "no better than chance",
        6,
    )
    assert "its bias figures describe noise" in judge["validity_note"]
    # The seniority models' from seniority_verdicts' validity:accuracy, where it holds one.
    accuracy = result.output_for_node("seniority_verdicts").query("finding == 'validity:accuracy'")
    stated = dict(zip(accuracy["model"], accuracy["verdict"]))
    for audit in summary[summary["study"] == "seniority"].itertuples():
        assert audit.validity_verdict == stated.get(audit.model, "not measured"), audit.model

    published = json.loads((tmp_path / "data" / "reports" / "bias_audit_summary.json").read_text())
    for rule, name in SUMMARY_FIELDS.items():
        for audit in published["audits"]:
            assert audit.get(name) not in (None, "", []) or name in CONDITIONAL_FIELDS, (rule, name, audit["model"])
    assert published["audits"][0]["rates"][0]["category"]
    flat = pd.read_csv(tmp_path / "data" / "reports" / "bias_audit_summary.csv")
    assert len(flat) == len(rates) and {"audit_date", "data_source", "impact_ratio"} <= set(flat.columns)
    # A tool name that reads as a formula is written as text (issue 40): no spreadsheet runs it.
    assert set(flat.loc[flat["model"] == "judge", "tool"]) == {"'=ScreenBot (judge-v1)"}

    record = result.output_for_node("eu_ai_act_record")
    assert set(record["section"]) == {"system", "data", "results", "open_risks", "logs"}
    missing = record[record["item"] == "EEO-1 categories without test names"]["value"].iloc[0]
    assert "American Indian or Alaska Native" in missing
    written = json.loads((tmp_path / "data" / "reports" / "eu_ai_act_test_record.json").read_text())
    assert written["logs"][0]["item"] == "response store"
    accuracy = {r["item"]: r["value"] for r in written["results"] if r["item"].endswith(" / accuracy")}
    assert accuracy["judge / jd_audit / accuracy"].startswith("fit scoring: 0.550 share of better and worse twins")
    assert any(r["item"] == "not shown valid: judge / jd_audit" for r in written["open_risks"])
    assert published["audits"][0]["validity"]["note"]


def test_bias_audit_rates_leaves_out_small_categories_only_when_asked_and_justified(stored):
    """The 2% exclusion of 6 RCNY §5-301(d) is the auditor's choice: off by default, and a
    min_share without its justification fails the asset with a message naming the setting."""
    from resumebias_dagster.defs.report import compliance

    config = compliance.BiasAuditRatesConfig()
    assert (config.min_share, config.exclusion_justification) == (0, "")
    _, resources, _ = stored
    built = [predictions.imported_predictions, compliance.bias_audit_rates]

    def run(rates_config):
        return dg.materialize(
            [stored_predictions, stored_scores, *built],
            selection=built,
            resources=resources,
            run_config={"ops": {"bias_audit_rates": {"config": rates_config}}},
            raise_on_error=False,
        )

    refused = run({"min_share": 0.02})
    assert not refused.success
    errors = " ".join(str(e.event_specific_data.error) for e in refused.get_step_failure_events())
    assert "min_share 0.02 > 0 needs exclusion_justification" in errors and "§5-301(d)" in errors
    refused = run({"min_share": 0.2, "exclusion_justification": "few names"})
    errors = " ".join(str(e.event_specific_data.error) for e in refused.get_step_failure_events())
    assert not refused.success and "min_share 0.2 is over 0.02" in errors

    chosen = run({"min_share": 0.02, "exclusion_justification": "few names"})
    assert chosen.success
    rates = chosen.output_for_node("bias_audit_rates")
    assert (rates["min_share"] == 0.02).all() and (rates["exclusion_justification"] == "few names").all()
