"""base_resumes and style_variants written by a configured provider model (notebook 004 prompts)
instead of the offline generator, through the response store; the base résumés come back as
structured JSON, rendered in the offline layout, so the job-description audit probes them."""

import json

import dagster as dg
import pytest
import yaml

from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.core.resumes.layout import REFERENCE_INDEX
from resumebias_dagster.defs.jd_audit import fit
from resumebias_dagster.defs.seniority_study import resumes, variants
from resumebias_dagster.defs.user_resumes.files import user_resume_probes, user_resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from resumebias_dagster.testing import fake_providers as fp
from resumebias_dagster.testing.fake_providers import FakeProviderServer

KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"


def _rewrite(request) -> str:
    """Notebook 004 rewrites: the résumé after the instructions, bullets restyled."""
    body = request.prompt.split("\nResume:\n", 1)[1]
    lead = "- Spearheaded work that " if "OVERSTATED" in request.prompt else "- Helped with work that "
    return body.replace("\n- ", "\n" + lead)


def _writer():
    return fp.structured_resume_answers(fallback=_rewrite)


@pytest.fixture
def writer(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))  # the test's catalog folder and store
    with FakeProviderServer("openai", answer=_writer()) as server:
        catalog_dir = tmp_path / "catalog"
        catalog_dir.mkdir()
        entry = {
            "name": "writer",
            "kind": "provider",
            "provider": "openai",
            "model": "google/gemma-3-27b-it",
            "base_url": server.base_url,
            "api_key_env": KEY_ENV,
            "temperature": 0.7,
            "runs_per_cell": 1,
            "timeout_s": 5.0,
            "max_retries": 1,
        }
        (catalog_dir / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}))
        yield (
            server,
            {
                "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
                "catalog": CatalogResource(catalog_dir=str(catalog_dir)),
                "compute": ComputeResource(device="cpu"),
                "shared_files": SharedFilesResource(),
                "providers": ProvidersResource(catalog_dir=str(catalog_dir), store_path=str(tmp_path / "r.sqlite")),
            },
        )


def test_generator_and_rewriter_models_replace_the_offline_generator(writer):
    server, resources = writer
    config = {
        "ops": {
            "base_resumes": {"config": {"n_per_level": 2, "generator_model": "writer"}},
            "style_variants": {"config": {"rewriter_model": "writer"}},
        }
    }
    assets = [resumes.base_resumes, variants.style_variants, variants.name_variants, user_resumes]
    result = dg.materialize(assets, resources=resources, run_config=config)
    base = result.output_for_node("base_resumes")
    assert base["seniority"].tolist() == ["junior", "mid", "senior"] * 2
    assert base["name"].is_unique and (base["first_name"] + " " + base["last_name"]).eq(base["name"]).all()
    assert set(base["occupation"]) == {"software_engineer", "data_analyst"}
    for row in base.itertuples():
        assert row.text.split("\n")[1].startswith(f"{row.email} | {row.phone} | {row.city}")
    styles = result.output_for_node("style_variants")
    assert styles.groupby("style").size().to_dict() == {"neutral": 6, "overstated": 6, "understated": 6}
    assert styles.loc[styles["style"] == "overstated", "text"].str.contains("Spearheaded").all()
    names = result.output_for_node("name_variants")
    assert len(names) == 24
    for row in base.itertuples():
        assert not names.loc[names["resume_id"] == row.resume_id, "text"].str.contains(row.last_name).any()
    meta = result.asset_materializations_for_node("base_resumes")[0].metadata
    assert meta["provider_calls_made"].value == server.count - 12 == 6  # one call per résumé, then 12 rewrites
    calls = server.count
    dg.materialize(assets, resources=resources, run_config=config)
    assert server.count == calls, "a re-run is answered by the response store"


def test_generated_resumes_feed_the_job_description_audit(writer):
    """Every configured (axis, level) for every generated résumé of the arm, and the blocking
    check of single signals and timelines passes."""
    _, resources = writer
    config = {
        "ops": {
            "base_resumes": {"config": {"n_per_level": 2, "generator_model": "writer"}},
            "probe_variants": {"config": {"occupation": "software_engineer", "levels": ["junior", "mid", "senior"]}},
        }
    }
    result = dg.materialize(
        [
            resumes.base_resumes,
            user_resumes,
            user_resume_probes,
            fit.probe_variants,
            fit.probe_variants_change_one_signal,
        ],
        resources=resources,
        run_config=config,
    )
    evaluations = result.get_asset_check_evaluations()
    assert len(evaluations) == 1 and evaluations[0].passed, evaluations[0].description
    probes = result.output_for_node("probe_variants")
    base = result.output_for_node("base_resumes").set_index("resume_id")
    assert base.loc[probes["resume_id"].unique(), "occupation"].eq("software_engineer").all()
    assert probes["resume_id"].nunique() == 3
    configured = {(a.id, level) for a in load_probe_axes().axes for level in a.levels}
    for resume_id, rows in probes[probes["variant"] != "baseline"].groupby("resume_id"):
        assert set(zip(rows["axis"], rows["level"])) == configured, resume_id


def test_a_malformed_generated_answer_fails_the_asset_naming_the_resume_and_field(writer):
    server, resources = writer
    bad = fp.structured_resume("junior", 0, "software_engineer", REFERENCE_INDEX)
    bad["positions"][0]["end"] = "2019-01"
    server.script(fp.answer(json.dumps(bad)))
    config = {
        "ops": {"base_resumes": {"config": {"n_per_level": 1, "generator_model": "writer", "generator_attempts": 1}}}
    }
    with pytest.raises(
        dg.Failure,
        match=r"base_resumes: generated résumés: 1 of 3 unusable after 1 draw\(s\) each, "
        r"e\.g\. g0000: invalid_resume: positions\[0\]\.end: '2019-01' is before "
        r"the start '\d{4}-\d\d'",
    ):
        dg.materialize([resumes.base_resumes], resources=resources, run_config=config)
    # Raising the draws pays only for the new draw: the refused one is in the store.
    calls = server.count
    config["ops"]["base_resumes"]["config"]["generator_attempts"] = 2
    result = dg.materialize([resumes.base_resumes], resources=resources, run_config=config)
    assert server.count == calls + 1 and len(result.output_for_node("base_resumes")) == 3


def test_a_generator_that_is_not_an_enabled_provider_model_is_refused(writer):
    _, resources = writer
    with pytest.raises(Exception, match="no enabled provider model named 'nobody'"):
        dg.materialize(
            [resumes.base_resumes],
            resources=resources,
            run_config={"ops": {"base_resumes": {"config": {"n_per_level": 1, "generator_model": "nobody"}}}},
        )
