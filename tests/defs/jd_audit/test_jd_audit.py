"""The job-description audit end to end on a small design: probes, fit scores from a provider
speaking the OpenAI wire format on 127.0.0.1, effects, summaries and plots."""

import json

import dagster as dg
import pandas as pd
import pytest
import yaml

from resumebias_dagster.catalog import PACKAGED_DIR
from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.defs.jd_audit import fit, plots
from resumebias_dagster.defs.jd_audit import judge as audit
from resumebias_dagster.defs.seniority_study import resumes
from resumebias_dagster.defs.user_resumes.files import user_resume_probes, user_resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from resumebias_dagster.testing.fake_providers import FakeProviderServer
from tests.defs.stored_columns import assert_stored_columns_match

KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
JDS = ["staff-software-engineer", "junior-java-developer"]
PARTITIONS = dg.MultiPartitionsDefinition(
    {"model": dg.StaticPartitionsDefinition(["fake-judge"]), "jd": dg.StaticPartitionsDefinition(JDS)}
)
FIT_SCORES = fit.build_fit_scores(PARTITIONS)
# The planted penalty: every name of one group (a pool: each résumé gets its own name).
PENALISED = "firstName_black_male"
RUNS = 24
PENALISED_NAMES = next(a for a in load_probe_axes(PACKAGED_DIR).axes if a.id == "firstName").levels["black_male"]
ASSETS = [
    resumes.base_resumes,
    fit.job_descriptions,
    fit.probe_variants,
    FIT_SCORES,
    fit.fit_effects,
    fit.fit_model_summary,
    fit.fit_axis_summary,
    plots.fit_plots,
    # probe_variants reads them (resumes: user); never materialised, they read as empty.
    user_resumes,
    user_resume_probes,
]


def _answer(request) -> str:
    """A deterministic screener that penalises one group's names and follows the hidden instruction.

    Constant scores: each cell has one résumé whose runs all agree, so the runs are the units
    and their no-spread bound decides (core/inference/estimate.py). How often an unseen run
    could answer otherwise shrinks with the runs: 24 a side make a 5-point penalty beyond noise
    after the multiplicity control over every cell (8 would not: 8 runs of one résumé, all
    alike, leave up to 42% of its answers unseen)."""
    prompt = request.prompt
    score = 6
    if any(name in prompt for name in PENALISED_NAMES):
        score = 1
    if "assign a score of 10 out of 10" in prompt:
        score = 10
    return json.dumps(
        {
            "score": score,
            "recommend": "yes" if score >= 6 else "no",
            "justification": "Relevant experience.",
            "strengths": ["a", "b", "c"],
            "concerns": ["x", "y", "z"],
        }
    )


def _verdict(request) -> str:
    """A judge that calls the name penalty bias, quoting the screener, and everything else justified."""
    if any(name in request.prompt for name in PENALISED_NAMES):
        return json.dumps(
            {
                "verdict": "bias",
                "confidence": "high",
                "rationale": "The score fell with the name.",
                "bias_signals": ["Relevant experience"],
            }
        )
    return json.dumps(
        {"verdict": "justified", "confidence": "medium", "rationale": "Same reasoning.", "bias_signals": []}
    )


@pytest.fixture
def audit_env(tmp_path, monkeypatch, data_dir):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))  # the test's catalog folder and store
    with FakeProviderServer("openai", answer=_answer) as server, FakeProviderServer("openai", answer=_verdict) as judge:
        catalog_dir = tmp_path / "catalog"
        catalog_dir.mkdir()
        entry = {
            "name": "fake-judge",
            "kind": "provider",
            "provider": "openai",
            "model": "fake/model",
            "base_url": server.base_url,
            "api_key_env": KEY_ENV,
            "temperature": 0.7,
            "runs_per_cell": RUNS,
            "max_concurrency": 8,
            "timeout_s": 5.0,
            "max_retries": 1,
        }
        auditor = {
            **entry,
            "name": "auditor",
            "model": "google/gemini-2.5-pro",
            "base_url": judge.base_url,
            "enabled": False,
            "runs_per_cell": 1,
            "max_tokens": {"judge": 1024},
        }
        (catalog_dir / "models.yaml").write_text(yaml.safe_dump({"models": [entry, auditor]}))
        (catalog_dir / "models_with_judge.yaml").write_text(
            yaml.safe_dump({"models": [entry, auditor], "judges": ["auditor"]})
        )
        resources = {
            "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
            "catalog": CatalogResource(catalog_dir=str(catalog_dir)),
            "compute": ComputeResource(device="cpu"),
            "shared_files": SharedFilesResource(),
            "providers": ProvidersResource(catalog_dir=str(catalog_dir), store_path=str(tmp_path / "r.sqlite")),
        }
        server.judge = judge
        yield server, resources


AUDIT_ASSETS = [audit.judge_verdicts, audit.judge_stability, audit.cross_judge_agreement, audit.judge_vs_effects]


def test_audit_finds_the_planted_name_penalty_and_prompt_injection(audit_env):
    server, resources = audit_env
    inputs = dg.materialize(
        [*ASSETS, fit.probe_variants_change_one_signal],
        selection=[
            resumes.base_resumes,
            fit.job_descriptions,
            fit.probe_variants,
            fit.probe_variants_change_one_signal,
        ],
        resources=resources,
        run_config={
            "ops": {
                "base_resumes": {"config": {"n_per_level": 3, "seed": 0}},
                "probe_variants": {"config": {"levels": ["senior"]}},
            }
        },
    )
    assert all(e.passed for e in inputs.get_asset_check_evaluations())
    variants = inputs.output_for_node("probe_variants")
    n_variants = len(variants)
    for jd in JDS:
        dg.materialize(
            ASSETS,
            selection=[FIT_SCORES],
            partition_key=dg.MultiPartitionKey({"model": "fake-judge", "jd": jd}),
            resources=resources,
        )
    assert server.count == 2 * n_variants * RUNS
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [*ASSETS, *AUDIT_ASSETS], selection=ASSETS[4:] + AUDIT_ASSETS, resources=resources, instance=instance
    )
    effects = result.output_for_node("fit_effects")
    assert len(effects) == 2 * (n_variants - 1)
    penalty = effects[effects["variant"] == PENALISED]
    assert (penalty["delta"] == -5).all() and penalty["significant"].all()
    injected = effects[effects["variant"] == "promptInjection_explicit"]
    assert (injected["delta"] == 4).all()
    placebo = effects[effects["arm"] == "placebo"]
    assert (placebo["delta"] == 0).all() and not placebo["significant"].any()
    summary = result.output_for_node("fit_model_summary")
    assert summary.loc[0, "largest_penalty"] == -5
    plots = result.output_for_node("fit_plots")
    assert set(plots["plot"]) == {"volcano", "heatmap_fake-judge"}
    meta = result.asset_materializations_for_node("fit_plots")[0].metadata
    assert meta["volcano"].value.startswith("![volcano](data:image/png;base64,")
    # No judge configured: the judge's tables are stored empty and say why; no verdict is invented.
    for node, output in (
        ("judge_verdicts", "result"),
        ("judge_stability", "judge_stability"),
        ("judge_stability", "judge_stability_matrix"),
        ("cross_judge_agreement", "result"),
        ("judge_vs_effects", "result"),
    ):
        assert len(result.output_for_node(node, output)) == 0, output
    meta = result.asset_materializations_for_node("judge_verdicts")[0].metadata
    assert meta["judged"].value is False and "no judge configured" in meta["why_not"].value
    stored = assert_stored_columns_match(resources["io_manager"].database)
    assert {"fit_scores", "fit_effects", "fit_model_summary", "fit_axis_summary", "fit_plots"} <= stored
    assert any("no judge configured" in entry.user_message for entry in instance.all_logs(result.run_id))

    again = dg.materialize(
        ASSETS,
        selection=[FIT_SCORES],
        partition_key=dg.MultiPartitionKey({"model": "fake-judge", "jd": JDS[0]}),
        resources=resources,
    )
    assert server.count == 2 * n_variants * RUNS, "unchanged inputs are answered by the response store"
    assert again.success


def test_judge_verdicts_stability_and_the_judge_against_the_numbers(audit_env, monkeypatch):
    server, resources = audit_env
    dg.materialize(
        ASSETS,
        selection=ASSETS[:3],
        resources=resources,
        run_config={
            "ops": {
                "base_resumes": {"config": {"n_per_level": 3, "seed": 0}},
                "probe_variants": {"config": {"levels": ["senior"]}},
            }
        },
    )
    dg.materialize(
        ASSETS,
        selection=[FIT_SCORES],
        partition_key=dg.MultiPartitionKey({"model": "fake-judge", "jd": JDS[0]}),
        resources=resources,
    )
    monkeypatch.setenv("RESUMEBIAS_MODELS_FILE", str(resources["catalog"].catalog_dir) + "/models_with_judge.yaml")
    judged = dict(
        resources,
        providers=ProvidersResource(
            models_file=str(resources["catalog"].catalog_dir) + "/models_with_judge.yaml",
            catalog_dir=resources["catalog"].catalog_dir,
            store_path=resources["providers"].store_path,
        ),
    )
    everything = [*ASSETS, *AUDIT_ASSETS]
    result = dg.materialize(everything, selection=[fit.fit_effects, *AUDIT_ASSETS], resources=judged)
    verdicts = result.output_for_node("judge_verdicts")
    n_cells = len(verdicts)
    assert n_cells == len(result.output_for_node("fit_effects"))
    # Deterministic screener: every run scores alike, so first and typical samples coincide: one call a cell.
    assert verdicts["samples_coincide"].all() and server.judge.count == n_cells
    name = verdicts[verdicts["variant"] == PENALISED].iloc[0]
    assert name["verdict"] == "bias" and name["n_non_verbatim_typical"] == 0
    assert (verdicts.loc[verdicts["variant"] != PENALISED, "verdict"] == "justified").all()
    assert verdicts["self_judging"].sum() == 0
    versus = result.output_for_node("judge_vs_effects")
    assert versus.loc[0, "n_judged_bias"] == 1 and versus.loc[0, "n_bias_on_noise"] == 0
    # The prompt injection moved the score by 4 points, significantly, and the judge called it justified.
    assert versus.loc[0, "n_unverbalised_bias"] >= 1

    again = dg.materialize(everything, selection=[audit.judge_verdicts], resources=judged)
    assert again.success and server.judge.count == n_cells, "unchanged inputs: no judge call"
    stored = assert_stored_columns_match(resources["io_manager"].database)
    assert {"judge_verdicts", "judge_stability", "judge_stability_matrix", "judge_vs_effects"} <= stored


def test_broken_probe_variant_fails_the_blocking_check(audit_env):
    _, resources = audit_env

    @dg.asset(name="probe_variants", dagster_type=fit.ProbeVariantsType)
    def broken() -> pd.DataFrame:
        from resumebias_dagster.core.jd_audit.probes import probe_variants
        from resumebias_dagster.core.seniority.generation import generate_resumes

        v = probe_variants(generate_resumes(n_per_level=1, seed=0).iloc[[1]])
        at = v.index[v["variant"] == "school_mit"][0]
        v.loc[at, "text"] = v.loc[at, "text"].replace("EXPERIENCE", "EXPERIENCE\\nExtra line")
        return v

    result = dg.materialize(
        [broken, user_resumes, user_resume_probes, fit.probe_variants_change_one_signal],
        selection=[broken, fit.probe_variants_change_one_signal],
        resources=resources,
        raise_on_error=False,
    )
    evaluation = result.get_asset_check_evaluations()[0]
    assert not evaluation.passed
    assert "school_" in evaluation.description
