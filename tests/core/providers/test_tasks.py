"""The tasks on top of the runner: seniority predictions, the cost estimate, notebook 004
generation with a provider model."""

import functools
import json

import pandas as pd
import pytest

from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
from resumebias_dagster.core.estimate import estimate_cost
from resumebias_dagster.core.providers import ResponseStore, run_requests
from resumebias_dagster.core.seniority.llm_generation import (
    clean_generated_text,
    generate_neutral_resumes,
    rewrite_styles,
)
from resumebias_dagster.core.seniority.task import predict_with_provider
from resumebias_dagster.core.tables import SeniorityPredictions, columns
from resumebias_dagster.testing import fake_providers as fp


def predict_seniority(variants, settings, store):
    """The provider path of the seniority task over a store (what the asset runs through ``providers.run``)."""
    return predict_with_provider(
        lambda requests: run_requests(settings, requests, store), variants, settings, load_prompt(SENIORITY_PROMPT)
    )


def variants(n=4):
    rows = []
    for i in range(n):
        rows.append(("style", i, "neutral", f"Résumé {i}: nine years building payment systems.", "senior", None))
        rows.append(("demographic", i, "caucasian_female", f"Résumé {i} of Emily Walsh.", "mid", "Emily Walsh"))
    return pd.DataFrame(rows, columns=["variant_kind", "original_idx", "variant", "text", "true_seniority", "name"])


def test_seniority_rows_in_the_predictions_format(fake_server, settings_for, store, fake_key):
    messy = iter(["**Senior**", "Mid-level", "```\njunior\n```", "mid or senior", "Senior.", "Based on it: mid"])
    server = fake_server("openai", answer=lambda request: next(messy, "senior"))
    server.script(*[fp.answer()] * 6, fp.refusal())
    settings = settings_for("openai", server.base_url, runs_per_cell=2, max_concurrency=1)
    df, stats = predict_seniority(variants(4), settings, store)
    assert list(df.columns) == columns(SeniorityPredictions)  # the declared table, every kind of model
    assert len(df) == 8 * 2 and server.count == 16
    assert df["run"].tolist() == [0, 1] * 8
    assert df["prediction"].tolist()[:7] == ["senior", "mid", "junior", "unknown", "senior", "mid", "error"]
    assert df.loc[3, "error"].startswith("unparsable: names several levels")
    assert df.loc[6, "error"].startswith("refusal")
    assert df["model"].unique().tolist() == ["fake-openai"]
    assert df["resolved_model"].notna().all() and (df["latency_s"] >= 0).all()
    assert stats.errors == {"unparsable": 1, "refusal": 1}
    again, stats2 = predict_seniority(variants(4), settings, store)
    assert server.count == 16 and stats2.calls_made == 0
    pd.testing.assert_frame_equal(again.drop(columns="latency_s"), df.drop(columns="latency_s"))


def test_seniority_predictions_validate_against_the_schema(fake_server, settings_for, store, fake_key):
    from resumebias_dagster.schemas import SeniorityPredictions

    server = fake_server("anthropic", answer=lambda request: "junior")
    server.script(fp.server_error(503), fp.server_error(503), fp.server_error(503))
    settings = settings_for("anthropic", server.base_url, max_retries=2, max_concurrency=1)
    df, _ = predict_seniority(variants(3), settings, store)
    SeniorityPredictions.validate(df)
    assert (df["prediction"] == "error").sum() == 1


def test_estimate_counts_calls_tokens_dollars_and_stored(fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url, runs_per_cell=3)
    table = estimate_cost([settings], variants(4), store)
    row = table.iloc[0]
    assert (row.calls, row.in_store, row.to_call) == (24, 0, 24)
    assert row.input_tokens > 0 and row.output_tokens == 24 * 5 and row.usd_to_call > 0
    predict_seniority(variants(2), settings, store)
    row = estimate_cost([settings], variants(4), store).iloc[0]
    assert (row.in_store, row.to_call) == (12, 12)
    assert row.output_tokens_basis == "store mean of 12"
    assert server.count == 12


def test_estimate_cost_command(tmp_path, model_entry, monkeypatch, capsys):
    import yaml

    from resumebias_dagster.cli import main

    models = tmp_path / "models.yaml"
    models.write_text(
        yaml.safe_dump({"models": [model_entry("openai", "https://openrouter.ai/api/v1", runs_per_cell=5)]})
    )
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    assert main(["estimate-cost", "--models-file", str(models), "--n-per-level", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["variants"] == 2 * 3 * (3 + 4)
    seniority = next(r for r in out["rows"] if r["task"] == "seniority")
    assert seniority["calls"] == out["variants"] * 5 and seniority["usd_to_call"] > 0
    assert main(["estimate-cost", "--models-file", str(models), "--n-per-level", "1"]) == 0
    assert "to spend now" in capsys.readouterr().out


def _rewriter_answer(request):
    body = request.prompt.split("\nResume:\n", 1)[1]
    lead = "- Spearheaded work that " if "OVERSTATED" in request.prompt else "- Helped with work that "
    return body.replace("\n- ", "\n" + lead)


def test_seed_004_generation_through_the_store(fake_server, settings_for, store, fake_key):
    server = fake_server("gemini", answer=fp.structured_resume_answers(fallback=_rewriter_answer))
    # The first draw breaks the seniority study's rule (a level word in a title): it is drawn again.
    first = fp.structured_resume("junior", 0, "software_engineer", 2025 * 12 + 5)
    first["positions"][0]["title"] = "Junior Software Engineer"
    server.script(fp.answer(json.dumps(first)))
    run = functools.partial(run_requests, settings_for("gemini", server.base_url, max_concurrency=1), store=store)
    base, stats = generate_neutral_resumes(run, n_per_level=2)
    assert base["seniority"].tolist() == ["junior", "mid", "senior"] * 2
    assert base["error"].isna().all() and base["draws"].tolist() == [2, 1, 1, 1, 1, 1]
    assert server.count == 7
    # The first round asks each level twice; in which order its calls reach the server is the
    # runner's business (concurrent workers), so only the counts are checked.
    first_round = [r.prompt for r in server.requests[:6]]
    for level in ("junior", "mid", "senior"):
        assert sum(f"for a {level}-level professional" in p for p in first_round) == 2, level
    styles, _ = rewrite_styles(run, base)
    assert styles.groupby("style").size().to_dict() == {"neutral": 6, "overstated": 6, "understated": 6}
    assert styles.loc[styles["style"] == "overstated", "text"].str.contains("Spearheaded").all()
    calls = server.count
    generate_neutral_resumes(run, n_per_level=2)
    rewrite_styles(run, base)
    assert server.count == calls  # everything served from the store


@pytest.mark.parametrize(
    "raw, clean",
    [
        ("```markdown\nA\nB\n```", "A\nB\n"),
        ("Here's a realistic resume:\n\nA\nB", "A\nB\n"),
        ("A\nB\n\n---\n\nLet me know if you'd like changes!", "A\nB\n"),
        ("Sure! Here is the rewritten resume:\n```\nA\n```", "A\n"),
        ("A\n**Note:** keeps text", "A\n**Note:** keeps text\n"),
    ],
)
def test_clean_generated_text(raw, clean):
    assert clean_generated_text(raw) == clean


def test_response_store_file_lives_in_the_data_dir(data_dir):
    with ResponseStore() as s:
        assert s.path == data_dir / "responses.sqlite"
