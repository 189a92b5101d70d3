"""``resumebias estimate-cost``: every task the design calls, at the current snapshot epoch, per
task, read from the store without ever creating one."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from resumebias_dagster.cli import main
from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
from resumebias_dagster.core.estimate import DEFAULT_OUTPUT_TOKENS, estimate_cost, study_design
from resumebias_dagster.core.jd_audit.design import load_fit_design
from resumebias_dagster.core.providers import ChatRequest, ResponseStore, run_requests
from resumebias_dagster.core.seniority.task import predict_with_provider


def predict_seniority(variants, settings, store):
    """The provider path of the seniority task over a store (what the asset runs through ``providers.run``)."""
    return predict_with_provider(
        lambda requests: run_requests(settings, requests, store), variants, settings, load_prompt(SENIORITY_PROMPT)
    )


def _variants(n: int) -> pd.DataFrame:
    rows = [
        ("style", i, "neutral", f"Résumé {i}: nine years building payment systems.", "senior", None) for i in range(n)
    ]
    return pd.DataFrame(rows, columns=["variant_kind", "original_idx", "variant", "text", "true_seniority", "name"])


@pytest.fixture(scope="module")
def design():
    return study_design(n_per_level=6)  # small, with software engineers for the design's arm


def test_every_task_of_the_design_is_counted(design, settings_for):
    audited = settings_for("openai", "http://127.0.0.1:9/v1", runs_per_cell=5)
    judge = settings_for("gemini", "http://127.0.0.1:9", name="judge", runs_per_cell=1)
    writer = settings_for("anthropic", "http://127.0.0.1:9", name="writer", runs_per_cell=1)
    table = estimate_cost([audited], design, None, judges=[judge], generator=writer, rewriter=writer)
    rows = {(r.model, r.task): r for r in table.itertuples(index=False)}
    assert set(rows) == {
        ("fake-openai", "seniority"),
        ("fake-openai", "fit"),
        ("fake-openai", "ranking"),
        ("judge", "judge"),
        ("writer", "generation"),
    }
    n_jds, n_probes = len(design.job_descriptions), len(design.probe_variants)
    # The design's job descriptions and arm (catalog/fit_design.yaml), not every packaged JD.
    assert design.job_descriptions["jd"].tolist() == list(load_fit_design().job_descriptions)
    assert n_jds == 1 and n_probes > 30
    assert rows["fake-openai", "seniority"].calls == len(design.variants) * 5
    assert rows["fake-openai", "fit"].calls == n_jds * n_probes * 5
    # The rankings asset's default: the arm's first 2 résumés a level, one item per group of the 8.
    from resumebias_dagster.core.jd_audit.probes import select_probe_resumes

    ranked = select_probe_resumes(design.base, **{**load_fit_design().arm(), "per_level": 2})
    assert 0 < len(ranked) <= 6 and rows["fake-openai", "ranking"].calls == n_jds * len(ranked) * 8 * 5
    n_resumes = design.probe_variants["resume_id"].nunique()  # several: one baseline each
    assert rows["judge", "judge"].calls == 2 * n_jds * (n_probes - n_resumes)
    assert pd.isna(rows["judge", "judge"].in_store) and "upper bound" in rows["judge", "judge"].note
    # 18 résumés written (structured: their facts come with them), each rewritten twice.
    assert rows["writer", "generation"].calls == 18 + 2 * 18
    assert rows["fake-openai", "fit"].output_tokens == n_jds * n_probes * 5 * DEFAULT_OUTPUT_TOKENS["fit"]
    assert (
        rows["fake-openai", "seniority"].output_tokens == len(design.variants) * 5 * DEFAULT_OUTPUT_TOKENS["seniority"]
    )


def test_answers_of_an_old_snapshot_are_not_counted_as_paid(fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url, runs_per_cell=3)
    predict_seniority(_variants(2), settings, store)
    row = estimate_cost([settings], _variants(4), store).iloc[0]
    assert (row.in_store, row.to_call, row.snapshot_epoch) == (6, 6, 0)
    store.observe_snapshot(settings, "gpt-5-2025-08-07")
    assert store.observe_snapshot(settings, "gpt-5-2026-01-15") == (True, 1)
    row = estimate_cost([settings], _variants(4), store).iloc[0]
    assert (row.in_store, row.to_call, row.snapshot_epoch) == (0, 12, 1)


def test_output_tokens_are_estimated_per_task(fake_server, settings_for, store, fake_key):
    server = fake_server(
        "openai",
        answer=lambda r: '{"score": 7, "justification": "' + "long " * 200 + '"}' if "JSON" in r.prompt else "mid",
    )
    settings = settings_for("openai", server.base_url, runs_per_cell=1)
    run_requests(settings, [ChatRequest.from_prompt(f"JSON {i}", json_mode=True, task="fit") for i in range(3)], store)
    predict_seniority(_variants(2), settings, store)
    row = estimate_cost([settings], _variants(4), store).iloc[0]
    assert row.task == "seniority" and row.output_tokens_basis == "store mean of 2"
    assert row.output_tokens == 2 * 1  # the fake server bills len("mid") // 4 = 1 token per label
    n, mean = store.mean_output_tokens(settings.provider, settings.endpoint, settings.model, "fit")
    assert n == 3 and mean > 200


def _models_file(tmp_path, model_entry):
    path = tmp_path / "models.yaml"
    path.write_text(
        yaml.safe_dump({"models": [model_entry("openai", "https://openrouter.ai/api/v1", runs_per_cell=1)]})
    )
    return path


def test_estimate_cost_creates_no_store(tmp_path, model_entry, monkeypatch, capsys):
    monkeypatch.setenv("RESUMEBIAS_DATA_DIR", str(tmp_path / "data"))
    assert (
        main(
            [
                "estimate-cost",
                "--models-file",
                str(_models_file(tmp_path, model_entry)),
                "--n-per-level",
                "1",
                "--task",
                "seniority",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "no response store at" in out and "to spend now" in out
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    "value,message",
    [("-1", "must be at least 1, got -1"), ("0", "must be at least 1"), ("two", "'two' is not a whole number")],
)
def test_estimate_cost_refuses_a_bad_number_of_resumes(value, message, tmp_path, model_entry, capsys):
    with pytest.raises(SystemExit) as raised:
        main(["estimate-cost", "--models-file", str(_models_file(tmp_path, model_entry)), "--n-per-level", value])
    assert raised.value.code == 2
    assert f"--n-per-level: {message}" in capsys.readouterr().err


def test_estimate_cost_refuses_a_file_that_is_not_a_store(tmp_path, model_entry, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("API_KEY=sk-do-not-print-me-4242\n")
    args = ["estimate-cost", "--models-file", str(_models_file(tmp_path, model_entry)), "--n-per-level", "1"]
    assert main([*args, "--store", str(notes)]) == 2
    err = capsys.readouterr().err
    assert "notes.txt is not a response store" in err and "sk-do-not-print" not in err
    assert notes.read_text().startswith("API_KEY")
    assert main([*args, "--store", str(tmp_path / "missing.sqlite")]) == 2
    assert "no response store at" in capsys.readouterr().err
    assert not (tmp_path / "missing.sqlite").exists()


def test_estimate_cost_reads_an_existing_store(tmp_path, model_entry, fake_server, settings_for, fake_key, capsys):
    server = fake_server("openai")
    entry = model_entry("openai", server.base_url, runs_per_cell=1)
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [entry]}))
    store_path = tmp_path / "responses.sqlite"
    with ResponseStore(store_path) as store:
        predict_seniority(
            study_design(1).variants.head(5), settings_for("openai", server.base_url, runs_per_cell=1), store
        )
    assert (
        main(
            [
                "estimate-cost",
                "--models-file",
                str(path),
                "--n-per-level",
                "1",
                "--store",
                str(store_path),
                "--task",
                "seniority",
                "--json",
            ]
        )
        == 0
    )
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["in_store"] == 5 and row["to_call"] == row["calls"] - 5
