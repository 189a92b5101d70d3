"""PNG figures (core/common/plots.py)."""

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.common.plots import heatmap_png, seniority_bars_png, volcano_png
from resumebias_dagster.core.jd_audit.fit_stats import fit_effects
from resumebias_dagster.testing.fit_simulation import simulate_fit_scores

PNG = b"\x89PNG\r\n\x1a\n"
MAX_BYTES = 200_000


@pytest.fixture(scope="module")
def effects():
    variants = ["baseline", *[f"placebo_p{k}" for k in range(4)], *[f"axis{k // 5}_l{k % 5}" for k in range(55)]]
    planted = {v: -3.5 for v in variants[5:12]}
    scores = simulate_fit_scores(
        [f"model-{k:02d}" for k in range(20)],
        [f"jd-{k:02d}" for k in range(17)],
        variants,
        1,
        effects=planted,
        sd=1.0,
        integer=True,
        seed=3,
        resumes=12,
    )
    return fit_effects(scores, arms={"placebo": "placebo"})


def is_png(data):
    return isinstance(data, bytes) and data.startswith(PNG)


def test_volcano_for_the_full_design_stays_small(effects):
    assert effects["significant"].any()
    png = volcano_png(effects)
    assert is_png(png) and len(png) < MAX_BYTES


def test_volcano_copes_with_untestable_and_degenerate_cells():
    scores = pd.DataFrame(
        {
            "model": "m",
            "jd": "j",
            "variant": ["baseline"] * 3 + ["school_a"] + ["school_b"] * 3 + ["placebo_p"] * 3,
            "run": [0, 1, 2, 0, 0, 1, 2, 0, 1, 2],
            "score": [7, 7, 7, 5, 6, 6, 6, 7, 7, 7],
        }
    )
    png = volcano_png(fit_effects(scores, arms={"placebo": "placebo"}))
    assert is_png(png)


def test_heatmap_per_model(effects):
    png = heatmap_png(effects, "model-03")
    assert is_png(png) and len(png) < MAX_BYTES
    assert is_png(heatmap_png(effects, "no-such-model"))


def test_seniority_bars_for_both_experiments():
    rows = []
    for model in ("gpt5", "sonnet45", "gemini3"):
        for kind, groups in (
            ("demographic", ["caucasian_male", "caucasian_female", "african_american_male", "african_american_female"]),
            ("style", ["neutral", "overstated", "understated"]),
        ):
            rows.append(
                {
                    "model": model,
                    "variant_kind": kind,
                    "group_kind": "all",
                    "group": "all",
                    "n": 40,
                    "n_valid": 40,
                    "accuracy": 0.7,
                    "rank_diff": 0.0,
                }
            )
            for g in groups:
                rows.append(
                    {
                        "model": model,
                        "variant_kind": kind,
                        "group_kind": kind,
                        "group": g,
                        "n": 10,
                        "n_valid": 10,
                        "accuracy": np.random.default_rng(len(rows)).uniform(0.5, 1),
                        "rank_diff": np.random.default_rng(len(rows)).uniform(-0.3, 0.3),
                    }
                )
    metrics = pd.DataFrame(rows)
    for kind in ("demographic", "style"):
        png = seniority_bars_png(metrics, kind)
        assert is_png(png) and len(png) < MAX_BYTES
    assert is_png(seniority_bars_png(metrics.iloc[:0]))


def test_empty_effects_give_a_placeholder_png(effects):
    assert is_png(volcano_png(effects.iloc[:0]))
