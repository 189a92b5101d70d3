"""base_resumes and style_variants written by a configured provider model (seed 004 prompts)
instead of the offline generator, through the response store."""

import itertools
import json
import re

import dagster as dg
import pytest
import yaml

from resumebias_dagster.assets import resumes, variants
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from resumebias_dagster.testing.fake_providers import FakeProviderServer

KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
FIRST = ["Rowan", "Quinn", "Harper", "Emerson", "Sawyer", "Marlow"]


def _writer():
    counter = itertools.count()

    def answer(request) -> str:
        prompt = request.prompt
        if prompt.startswith("Generate a complete"):
            first = FIRST[next(counter) % len(FIRST)]
            return (
                f"{first} Castellano\n{first.lower()}.castellano@example.com\n\nSummary\nData engineer with "
                "6 years of experience.\n\nExperience\nAcme Corp, 2019-2025\n- Built data pipelines in Python\n\n"
                "Education\nB.Sc. Computer Science, State University, 2018\n\nSkills\nPython, SQL\n"
            )
        if "OVERSTATED" in prompt or "UNDERSTATED" in prompt:
            body = prompt.split("\n\n", 1)[1]
            return body.replace("Built", "Architected" if "OVERSTATED" in prompt else "Helped build")
        name = re.search(r"^([A-Z][a-z]+ Castellano)$", prompt, re.MULTILINE).group(1)
        return json.dumps({"name": name, "email": "x@example.com", "occupation": "Data engineer",
                           "years_experience": 6, "employers": ["Acme Corp"], "degree": "B.Sc. Computer Science",
                           "school": "State University", "graduation_year": 2018, "skills": ["Python", "SQL"]})

    return answer


@pytest.fixture
def writer(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))  # the test's catalog folder and store
    with FakeProviderServer("openai", answer=_writer()) as server:
        catalog_dir = tmp_path / "catalog"
        catalog_dir.mkdir()
        entry = {"name": "writer", "kind": "provider", "provider": "openai", "model": "google/gemma-3-27b-it",
                 "base_url": server.base_url, "api_key_env": KEY_ENV, "temperature": 0.7, "runs_per_cell": 1,
                 "timeout_s": 5.0, "max_retries": 1}
        (catalog_dir / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}))
        yield server, {
            "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
            "catalog": CatalogResource(catalog_dir=str(catalog_dir)),
            "compute": ComputeResource(device="cpu"),
            "providers": ProvidersResource(catalog_dir=str(catalog_dir), store_path=str(tmp_path / "r.sqlite")),
        }


def test_generator_and_rewriter_models_replace_the_offline_generator(writer):
    server, resources = writer
    config = {"ops": {
        "base_resumes": {"config": {"n_per_level": 2, "generator_model": "writer"}},
        "style_variants": {"config": {"rewriter_model": "writer"}},
    }}
    assets = [resumes.base_resumes, variants.style_variants, variants.name_variants]
    result = dg.materialize(assets, resources=resources, run_config=config)
    base = result.output_for_node("base_resumes")
    assert base["seniority"].tolist() == ["junior", "mid", "senior"] * 2
    assert base["name"].str.endswith("Castellano").all() and base["first_name"].isin(FIRST).all()
    styles = result.output_for_node("style_variants")
    assert styles.groupby("style").size().to_dict() == {"neutral": 6, "overstated": 6, "understated": 6}
    assert styles.loc[styles["style"] == "overstated", "text"].str.contains("Architected").all()
    names = result.output_for_node("name_variants")
    assert len(names) == 24 and not names["text"].str.contains("Castellano").any()
    meta = result.asset_materializations_for_node("base_resumes")[0].metadata
    assert meta["provider_calls_made"].value == server.count - 12  # 6 résumés + 6 fact extractions, then 12 rewrites
    calls = server.count
    dg.materialize(assets, resources=resources, run_config=config)
    assert server.count == calls, "a re-run is answered by the response store"


def test_a_generator_that_is_not_an_enabled_provider_model_is_refused(writer):
    _, resources = writer
    with pytest.raises(Exception, match="no enabled provider model named 'nobody'"):
        dg.materialize(
            [resumes.base_resumes], resources=resources,
            run_config={"ops": {"base_resumes": {"config": {"n_per_level": 1, "generator_model": "nobody"}}}},
        )
