"""A blind audit (issue 39) of a ``kind: python`` screener: the function sees opaque ids, never
our item ids (job description, résumé, variant), and its items in a seeded shuffled order, not
grouped by résumé; the answers still land on the rows they belong to."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from resumebias_dagster.core.jd_audit.fit_task import predict_fit
from resumebias_dagster.core.models.model_config import ModelConfigError, parse_models
from resumebias_dagster.core.models.runtime import ModelRuntime

USER_PACKAGE = """
SEEN = []


def by_length(items):
    SEEN.extend(dict(item) for item in items)
    return [1 + len(item["resume"]) % 10 for item in items]
"""
VARIANTS = ("baseline", "firstName_black_female", "careerGap_caregiving", "promptInjection_explicit")
RESUME_IDS = ("u-b52965360e57", "u-0c4f1a9d2e33", "u-7e21bb90a4c8")
RUNTIME = ModelRuntime(resolve_compute=lambda: None, cache_dir=Path("."))


@pytest.fixture
def userblind(tmp_path, monkeypatch):
    (tmp_path / "userblind.py").write_text(textwrap.dedent(USER_PACKAGE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "userblind", raising=False)
    import userblind

    return userblind


def variants():
    import pandas as pd

    rows = [
        (resume_id, variant, "probe", variant.split("_")[0], "", None, f"Jordan Lee {i}\n{'x' * j} years.\n")
        for i, resume_id in enumerate(RESUME_IDS)
        for j, variant in enumerate(VARIANTS)
    ]
    return pd.DataFrame(rows, columns=["resume_id", "variant", "arm", "axis", "level", "name", "text"])


def score(module, **options):
    entry = {
        "name": "userfn",
        "kind": "python",
        "entry_point": "userblind:by_length",
        "batch_size": 5,
        "runs_per_cell": 1,
        **options,
    }
    spec = parse_models({"models": [entry]}, "models.yaml")[0]
    module.SEEN.clear()
    df, _ = predict_fit(spec, variants(), jd="backend-python-engineer", jd_text="A job.", template="", runtime=RUNTIME)
    return df, list(module.SEEN)


def test_the_function_sees_opaque_ids_in_a_shuffled_order(userblind):
    df, seen = score(userblind)
    assert len(seen) == len(RESUME_IDS) * len(VARIANTS)
    ids = [item["id"] for item in seen]
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids) and len(set(ids)) == len(ids)
    words = ("backend-python-engineer", *RESUME_IDS, *VARIANTS, "black", "female", "caregiving", "explicit")
    assert not [w for item in seen for w in words if w.lower() in repr(item).lower()]
    by_text = {t: r for r, t in variants()[["resume_id", "text"]].itertuples(index=False)}
    order = [by_text[item["resume"]] for item in seen]
    # Grouped, the résumé would change twice in 12 items.
    assert sum(a != b for a, b in zip(order, order[1:])) >= 5
    # Each row holds its own text's answer, whatever order the function saw.
    assert df["score"].tolist() == [1 + len(t) % 10 for t in variants()["text"]]
    # Seeded: the same order again; another seed, another order.
    assert [item["resume"] for item in score(userblind)[1]] == [item["resume"] for item in seen]
    assert [item["resume"] for item in score(userblind, order_seed=3)[1]] != [item["resume"] for item in seen]


def test_a_bad_seed_is_refused_naming_the_setting():
    entry = {"name": "userfn", "kind": "python", "entry_point": "userblind:by_length", "order_seed": "first"}
    with pytest.raises(ModelConfigError) as exc:
        parse_models({"models": [entry]}, "models.yaml")
    assert str(exc.value) == "models.yaml: model 'userfn': order_seed must be a whole number >= 0, got 'first'"
