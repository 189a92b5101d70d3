"""Cell selection and model families (core/jd_audit/judge/cells.py)."""

import numpy as np
import pytest

from resumebias_dagster.core.jd_audit import judge as A
from resumebias_dagster.core.models.model_config import ModelSpec, load_models
from tests.core.jd_audit.judge.fit_rows import one, runs, table


def test_first_and_typical_picks_with_ties_broken_by_lowest_run():
    df = table(
        # Baseline mean 7: runs 0, 3, 4 sit on it; the lowest, 0, is typical (= first).
        runs("m", "baseline", [7, 6, 8, 7, 7]),
        # Mean 6: runs 2 and 3 sit on it; typical is run 2, first is run 0.
        runs("m", "firstName_wei_chen", [5, 8, 6, 6, 5]),
        # Mean 6.4: |6 - 6.4| = 0.4 beats |7 - 6.4| = 0.6, so run 1 (the lowest 6).
        runs("m", "school_mit", [7, 6, 7, 6, 6]),
        # Constant: every run ties, so typical = first = run 0: the samples coincide.
        runs("m", "promptInjection_explicit", [9, 9, 9, 9, 9]),
    ).sample(frac=1.0, random_state=3)  # row order must not matter
    cells, skipped = A.judge_cells(df, 5)
    assert skipped.empty and list(cells.columns) == list(A.CELL_COLUMNS)
    assert cells["variant"].tolist() == ["firstName_wei_chen", "promptInjection_explicit", "school_mit"]
    name = one(cells, variant="firstName_wei_chen")
    assert (name.first_baseline_run, name.first_variant_run) == (0, 0)
    assert (name.typical_baseline_run, name.typical_variant_run) == (0, 2)
    assert (name.n_runs, name.baseline_mean, name.variant_mean, name.mean_delta) == (5, 7.0, 6.0, -1.0)
    assert (name.first_variant_score, name.typical_variant_score) == (5.0, 6.0)
    assert not name.samples_coincide
    assert one(cells, variant="school_mit").typical_variant_run == 1
    assert one(cells, variant="school_mit").mean_delta == pytest.approx(-0.6)
    assert one(cells, variant="promptInjection_explicit").samples_coincide


def test_an_exact_tie_between_two_scores_goes_to_the_lower_run():
    # Baseline 6 8 6 8: mean 7, all four runs at distance 1 -> run 0. Variant 8 6 7 9:
    # mean 7.5, runs 0 (8) and 2 (7) both at 0.5 -> run 0. Both typical picks are the first.
    df = table(runs("m", "baseline", [6, 8, 6, 8]), runs("m", "firstName_wei_chen", [8, 6, 7, 9]))
    cells, _ = A.judge_cells(df, 4)
    c = cells.iloc[0]
    assert (c.typical_baseline_run, c.typical_variant_run) == (0, 0) and c.samples_coincide


def test_short_cells_and_cells_without_text_are_skipped_with_their_reason():
    nan = np.nan
    df = table(
        runs("m", "baseline", [7, 7, 7]),
        runs("m", "firstName_wei_chen", [6, nan, 6]),  # one failed run: short
        runs("m", "school_mit", [6, 6]),  # never backfilled: short
        runs("m", "placebo_blank_line", [7, 7, 7]),  # complete
        runs("m", "promptInjection_explicit", [7, 7, 7, 7]),  # more runs than required
        runs("m", "baseline", [7, nan, 7], resume="r2"),  # short baseline: its variants are skipped
        runs("m", "firstName_wei_chen", [6, 6, 6], resume="r2"),
        runs("m", "firstName_wei_chen", [6, 6, 6], resume="r3"),  # no baseline at all
        runs("embedded", "baseline", [7, 6, 7], text=False),  # an embedded model writes nothing
        runs("embedded", "firstName_wei_chen", [6, 6, 5], text=False),
        runs("other", "baseline", [7, 7, 7]),
        runs("other", "firstName_wei_chen", [7, 7, 7]),
    )
    cells, skipped = A.judge_cells(df, {"m": 3, "embedded": 3})
    assert list(cells[["model", "resume_id", "variant"]].itertuples(index=False, name=None)) == [
        ("m", "r1", "placebo_blank_line")
    ]
    assert list(skipped.columns) == list(A.SKIPPED_COLUMNS)
    reasons = {(r.model, r.resume_id, r.variant): r.reason for r in skipped.itertuples()}
    assert reasons == {
        ("embedded", "r1", "firstName_wei_chen"): "no written evaluation",
        ("m", "r1", "firstName_wei_chen"): "variant: 2 valid runs, 3 required",
        ("m", "r1", "promptInjection_explicit"): "variant: 4 valid runs, 3 required",
        ("m", "r1", "school_mit"): "variant: 2 valid runs, 3 required",
        ("m", "r2", "firstName_wei_chen"): "baseline: 2 valid runs, 3 required",
        ("m", "r3", "firstName_wei_chen"): "no baseline runs",
        ("other", "r1", "firstName_wei_chen"): "no runs_per_cell known for this model",
    }
    row = one(skipped, model="m", resume_id="r1", variant="firstName_wei_chen")
    assert (row.n_baseline, row.n_variant, row.runs_required) == (3, 2, 3)


# --------------------------------------------------------------------------- families


@pytest.mark.parametrize(
    ("alias", "family"),
    [
        ("openai/gpt-5", "openai"),
        ("gpt-4o-mini", "openai"),
        ("o3-mini", "openai"),
        ("o1", "openai"),
        ("claude-sonnet-4-5", "anthropic"),
        ("anthropic/claude-opus-4.1", "anthropic"),
        ("google/gemini-3-pro-preview", "google"),
        ("gemini-2.5-pro", "google"),
        ("gemma3-270m", "google"),
        ("meta-llama/Llama-3.3-70B-Instruct", "meta"),
        ("llama-3.3-70b-versatile", "meta"),
        ("mistral-large-latest", "mistral"),
        ("mistralai/Mixtral-8x7B", "mistral"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen"),
        ("deepseek-r1-distill-llama-70b", "deepseek"),
        ("x-ai/grok-4", "x-ai"),
        ("grok-4", "grok"),
    ],
)
def test_family_from_alias(alias, family):
    assert A.family_of(alias) == family


def test_family_of_specs_explicit_family_wins_and_self_judging():
    spec = ModelSpec("house-model", "provider", 0.7, 5, {"provider": "openai", "model": "acme/house-v1"})
    assert A.family_of(spec) == "acme"
    tagged = ModelSpec(
        "house-model", "provider", 0.7, 5, {"provider": "openai", "model": "acme/house-v1", "family": "Google"}
    )
    assert A.family_of(tagged) == "google"
    families = {s.name: A.family_of(s) for s in load_models(include_disabled=True)}
    assert families["gemma3-270m"] == "google" and families["gemini-3-pro"] == "google"
    assert families["claude-sonnet"] == "anthropic" and families["local-vllm"] == "qwen"
    assert families["minilm-classifier"] == "minilm"
    flags = A.self_judging(
        "google",
        ["gemini-3-pro", "gpt-5", "gemini-3-pro", "gemini-unlisted"],
        {"gemini-3-pro": "google", "gpt-5": "openai"},
    )
    assert flags.tolist() == [True, False, True, True]
