"""name_variants' ``name_scope`` config: both scopes materialise and pass the blocking check,
a bad value is a config error naming the setting."""

import dagster as dg
import pytest

from resumebias_dagster.core.seniority.generation import generate_resumes
from resumebias_dagster.defs.seniority_study import variants
from resumebias_dagster.defs.user_resumes.files import user_resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.storage import ResumebiasIOManager


@dg.asset(name="base_resumes")
def base_resumes():
    """The offline generator's résumés, without the provider resource base_resumes asks for."""
    return generate_resumes(n_per_level=1)


# name_variants reads user_resumes (resumes: user); never materialised, it reads as empty.
ASSETS = [base_resumes, user_resumes, variants.name_variants, variants.name_variants_differ_only_in_names]


def _materialise(tmp_path, name_config: dict):
    # The DuckDB file lies in tmp_path: the operator's allowed folders include it here.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
        return _materialise_in(tmp_path, name_config)


def _materialise_in(tmp_path, name_config: dict):
    return dg.materialize(
        ASSETS,
        resources={
            "io_manager": ResumebiasIOManager(database=str(tmp_path / "study.duckdb"), schema="audit"),
            "catalog": CatalogResource(),
        },
        run_config={"ops": {"name_variants": {"config": name_config}}},
    )


@pytest.mark.parametrize("scope", ["everywhere", "first_line", None])
def test_both_scopes_materialise_and_pass_the_check(tmp_path, scope):
    result = _materialise(tmp_path, {} if scope is None else {"name_scope": scope})
    assert result.success
    names = result.output_for_node("name_variants")
    base = result.output_for_node("base_resumes")
    assert set(names["name_scope"]) == {scope or "everywhere"}
    checks = {e.asset_check_key.name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"differ_only_in_names": True}
    emails = base["email"].tolist()
    kept = [emails[row.original_idx] in row.text for row in names.itertuples()]
    # Notebook 004 kept the original e-mail; the default replaces it.
    assert all(kept) if scope == "first_line" else not any(kept)
    meta = result.asset_materializations_for_node("name_variants")[0].metadata
    assert meta["name_scope"].value == (scope or "everywhere")


def test_a_bad_scope_is_a_config_error_naming_the_setting(tmp_path):
    with pytest.raises(dg.DagsterInvalidConfigError, match=r"name_variants:config:name_scope.*name_line"):
        _materialise(tmp_path, {"name_scope": "name_line"})
