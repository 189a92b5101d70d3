"""The table models share one strict base and the key columns several tables begin with
(core/tables/base.py); schemas.py makes each a Dagster type. What the sharing must keep:
every table strict and named after its class, columns in their declared order, and a check
declared on a shared base named the same in every table built from it."""

import warnings

import pandera.pandas as pa
import pytest

from resumebias_dagster.core import tables
from resumebias_dagster.core.tables.base import StrictTable

MODELS = [
    getattr(tables, name)
    for name in tables.__all__
    if isinstance(getattr(tables, name), type) and issubclass(getattr(tables, name), pa.DataFrameModel)
]


def test_every_table_model_is_exported():
    """A model left out of __all__ would get no Dagster type (schemas.py builds them from it)."""
    import importlib
    import pkgutil

    defined = set()
    for info in pkgutil.iter_modules(tables.__path__):
        module = importlib.import_module(f"{tables.__name__}.{info.name}")
        defined |= {
            obj
            for obj in vars(module).values()
            if isinstance(obj, type)
            and issubclass(obj, StrictTable)
            and obj.__module__ == module.__name__
            and not obj.__name__.startswith("_")
            and obj.__name__ not in ("StrictTable", "PerModel", "PerJudge")
        }
    assert defined and defined == set(MODELS)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_table_is_strict_and_named_after_its_class(model):
    schema = model.to_schema()
    assert issubclass(model, StrictTable)
    assert schema.strict is True and schema.name == model.__name__ == model.Config.name
    assert schema.description == model.__doc__
    assert not schema.coerce and not schema.ordered


def test_shared_key_columns_come_first():
    assert tables.columns(tables.FitScores)[:3] == ["model", "jd", "resume_id"]
    assert tables.columns(tables.FitEffects)[:3] == ["model", "jd", "variant"]
    assert tables.columns(tables.SeniorityGroupMetrics)[:4] == ["model", "variant_kind", "name_scope", "group_kind"]
    assert tables.columns(tables.SeniorityBiasSummary)[:4] == ["model", "variant_kind", "name_scope", "n"]
    assert tables.columns(tables.JudgeVerdicts)[:3] == ["judge", "judge_resolved_model", "model"]
    assert tables.columns(tables.JudgeVsEffects)[:3] == ["judge", "model", "n_cells"]
    assert tables.columns(tables.Verdicts)[:2] == ["model", "study"]
    assert tables.columns(tables.SeniorityImpactRatios)[:3] == ["model", "selection", "dimension"]


def test_a_check_of_a_shared_base_has_its_declared_name_in_every_table():
    names = {model: [check.name for check in model.to_schema().checks] for model in MODELS}
    assert (
        names[tables.SeniorityImpactRatios]
        == names[tables.FitImpactRatios]
        == [
            "selected_within_n",
            "ci_contains_ratio",
            "flag_is_ratio_below_four_fifths",
            "interval_flag_implies_flag",
            "one_row_per_group",
        ]
    )
    for model in (tables.BaseResumes, tables.StyleVariants):
        assert [c.name for c in model.to_schema().columns["text"].checks][-1] == "no_seniority_words"


def test_each_model_is_a_dagster_type_of_its_name():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from resumebias_dagster import schemas
        from resumebias_dagster.schemas import FitScoresType, VerdictsType

    assert set(schemas.DAGSTER_TYPES) == {f"{m.__name__}Type" for m in MODELS}
    for model in MODELS:
        dagster_type = getattr(schemas, f"{model.__name__}Type")
        assert dagster_type.unique_name == model.__name__
        assert dagster_type.description == model.__doc__
    assert FitScoresType is schemas.DAGSTER_TYPES["FitScoresType"] and VerdictsType.unique_name == "Verdicts"
    assert schemas.BaseResumes is tables.BaseResumes
    with pytest.raises(AttributeError):
        getattr(schemas, "NoSuchTableType")
