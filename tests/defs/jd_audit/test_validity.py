"""validity_pairs and validity_scores materialised with Dagster into a real DuckDB file: a
`kind: python` screener planted to follow the job descriptions' requirements ranks every better
twin above its baseline and every worse twin below, and scores the equal twins alike."""

import dagster as dg
import duckdb
import pandas as pd
import pytest
import yaml

from resumebias_dagster.defs.jd_audit import fit, validity
from resumebias_dagster.defs.seniority_study import resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import ResumebiasIOManager
from tests.defs.stored_columns import assert_stored_columns_match

# The staff role states 8+ years and skills; the performance architect a master's degree too.
JDS = ["principal-performance-architect", "staff-software-engineer"]
PARTITIONS = dg.MultiPartitionsDefinition(
    {"model": dg.StaticPartitionsDefinition(["planted"]), "jd": dg.StaticPartitionsDefinition(JDS)}
)
SCORES = validity.build_validity_scores(PARTITIONS, kinds={"python", "duckdb"})
ASSETS = [resumes.base_resumes, fit.job_descriptions, validity.validity_pairs_asset, SCORES]


@pytest.fixture
def validity_env(tmp_path, monkeypatch, data_dir):
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    catalog_dir = tmp_path / "catalog"
    catalog_dir.mkdir()
    entry = {
        "name": "planted",
        "kind": "python",
        "entry_point": "resumebias_dagster.testing.planted_validity:follows",
        "runs_per_cell": 1,
    }
    (catalog_dir / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}))
    design = {
        "resumes": {"occupation": "software_engineer", "levels": ["junior", "mid", "senior"], "per_level": 1},
        "job_descriptions": JDS,
        "validity": {"groups": ["white_male", "black_female"], "per_level": 1},
    }
    (catalog_dir / "fit_design.yaml").write_text(yaml.safe_dump(design))
    return {
        "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
        "catalog": CatalogResource(catalog_dir=str(catalog_dir)),
        "compute": ComputeResource(device="cpu"),
        "shared_files": SharedFilesResource(),
        "providers": ProvidersResource(catalog_dir=str(catalog_dir), store_path=str(tmp_path / "r.sqlite")),
    }


def test_a_screener_following_the_requirements_orders_every_pair(validity_env):
    inputs = dg.materialize(
        [*ASSETS, validity.validity_pairs_change_one_signal],
        selection=[*ASSETS[:3], validity.validity_pairs_change_one_signal],
        resources=validity_env,
        run_config={"ops": {"base_resumes": {"config": {"n_per_level": 6, "seed": 0}}}},
    )
    (check,) = inputs.get_asset_check_evaluations()
    assert check.passed and check.check_name == "change_one_signal"
    pairs = inputs.output_for_node("validity_pairs")
    meta = inputs.asset_materializations_for_node("validity_pairs")[0].metadata
    assert meta["sets"].value == 3 * 2 * 2  # 3 résumés x 2 groups x 2 job descriptions
    assert meta["dropped_twins"].value == 0
    assert "states no degree" in meta["skipped"].value  # the staff role states none
    assert set(pairs["role"]) == {"baseline", "better", "worse", "equal"}
    assert {"skill", "years", "degree"} <= set(pairs.loc[pairs["role"] == "better", "edit"])
    for jd in JDS:
        dg.materialize(
            ASSETS,
            selection=[SCORES],
            partition_key=dg.MultiPartitionKey({"model": "planted", "jd": jd}),
            resources=validity_env,
        )
    stored = assert_stored_columns_match(validity_env["io_manager"].database)
    assert {"validity_pairs", "validity_scores"} <= stored
    with duckdb.connect(validity_env["io_manager"].database, read_only=True) as con:
        rows = con.execute("select * from audit.validity_scores").df()
    assert len(rows) == len(pairs) and rows["score"].notna().all()
    assert set(rows["arm"]) == {"validity"}
    merged = rows.merge(
        pairs[["jd", "resume_id", "variant", "group", "role", "edit"]], on=["jd", "resume_id", "variant"]
    )
    assert len(merged) == len(pairs)
    merged["s0"] = merged.groupby(["jd", "resume_id", "group"])["score"].transform(
        lambda s: s[merged.loc[s.index, "role"] == "baseline"].iloc[0]
    )
    twins = merged[merged["role"] != "baseline"]
    right = {
        "better": twins["score"] > twins["s0"],
        "worse": twins["score"] < twins["s0"],
        "equal": twins["score"] == twins["s0"],
    }
    ordered = pd.concat([right[role][twins["role"] == role] for role in right])
    wrong = twins.loc[~ordered.reindex(twins.index), ["jd", "resume_id", "variant", "score", "s0"]]
    assert wrong.empty, wrong.to_string()
    assert (twins["role"] == "worse").any() and (twins["role"] == "equal").any()
    # The verdicts read every partition's scores: 3 résumés are too few to call the screener valid,
    # and the interval says so (its whole share right, its bound below the 0.9 target).
    done = dg.materialize(
        [*ASSETS, validity.validity_verdicts], selection=[validity.validity_verdicts], resources=validity_env
    )
    verdicts = done.output_for_node("validity_verdicts").set_index("finding")
    criterion = verdicts.loc["validity:criterion"]
    assert criterion["estimate"] == 1.0 and criterion["ci_low"] < 0.9
    assert criterion["verdict"] in ("better than chance", "no better than chance")
    meta = done.asset_materializations_for_node("validity_verdicts")[0].metadata
    assert meta["measures_qualification"].value["planted"] in ("not shown valid", "no better than chance")
