"""Output-token limits per task (seniority label, fit JSON, judge JSON, generation): each task's
request carries its own limit to the wire, a config whose limit cannot hold a task's answer is
refused when it is read, and the packaged configs load."""

import json

import pandas as pd
import pytest
import yaml

from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
from resumebias_dagster.core.jd_audit import judge as A
from resumebias_dagster.core.jd_audit.fit_task import fit_requests
from resumebias_dagster.core.models.model_config import (
    ModelConfigError,
    load_judges,
    load_models,
    parse_judges,
    parse_models,
    task_tokens,
)
from resumebias_dagster.core.models.task_tokens import FIT_TOKENS, GENERATION_TOKENS, JUDGE_TOKENS, SENIORITY_TOKENS
from resumebias_dagster.core.providers import ChatRequest, run_requests
from resumebias_dagster.core.providers.alias_probe import probe_resolved_model
from resumebias_dagster.core.providers.types import TASKS, ProviderConfigError, ProviderSettings
from resumebias_dagster.core.seniority.task import seniority_requests

WIRES = ("openai", "anthropic", "gemini")
LIMITS = {"seniority": 12, "fit": 700, "judge": 900, "generation": 3000}


def received_max_tokens(wire, body):
    """The output-token limit a request carried, in the wire's own field."""
    if wire == "gemini":
        return body["generationConfig"].get("maxOutputTokens")
    return body.get("max_tokens", body.get("max_completion_tokens"))


def judge_cell_requests():
    """The judge's requests for one cell, built by core/jd_audit/judge/ as the audit builds them."""
    rows = []
    for variant, scores in (("baseline", [7, 6]), ("firstName_wei_chen", [5, 6])):
        axis, _, level = variant.partition("_")
        for run, score in enumerate(scores):
            rows.append(
                {
                    "model": "m",
                    "jd": "j",
                    "resume_id": "r1",
                    "variant": variant,
                    "arm": "probe",
                    "axis": axis,
                    "level": level,
                    "run": run,
                    "score": score,
                    "recommend": "maybe",
                    "justification": f"{variant} run {run}.",
                    "strengths": json.dumps(["Go"]),
                    "concerns": json.dumps(["none"]),
                    "error": None,
                    "note": None,
                }
            )
    df = pd.DataFrame(rows)
    cells, _ = A.judge_cells(df, 2)
    return A.judge_requests(cells, df, A.load_judge_prompts(), job_titles={"j": "Staff Software Engineer"})


def task_requests(settings):
    """One batch per task, each built by the task's own code (generation's builders tag their
    requests task="generation"; core/seniority/llm_generation.py is being rewritten, so it is built here)."""
    variants = pd.DataFrame({"text": ["Nine years building payment systems."]})
    return {
        "seniority": seniority_requests(variants, settings.runs_per_cell, load_prompt(SENIORITY_PROMPT)),
        "fit": fit_requests(["Job: ... Résumé: ... JSON:"], 1),
        "judge": judge_cell_requests(),
        "generation": [ChatRequest.from_prompt("Generate a complete, realistic resume.", task="generation")],
    }


# ------------------------------------------------------------------ the wire


@pytest.mark.parametrize("wire", WIRES)
def test_each_task_sends_its_own_configured_limit(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    settings = settings_for(wire, server.base_url, max_tokens=dict(LIMITS))
    for task, requests in task_requests(settings).items():
        before = server.count
        results, _ = run_requests(settings, requests, store)
        bodies = [r.body for r in server.requests[before:]]
        assert bodies, f"{task}: no call reached the server"
        assert {received_max_tokens(wire, b) for b in bodies} == {LIMITS[task]}, task


@pytest.mark.parametrize("wire", WIRES)
def test_each_task_sends_its_default_when_the_entry_sets_none(wire, fake_server, settings_for, store, fake_key):
    server = fake_server(wire)
    settings = settings_for(wire, server.base_url)
    defaults = {task: limit.default for task, limit in task_tokens().items()}
    for task, requests in task_requests(settings).items():
        before = server.count
        run_requests(settings, requests, store)
        assert {received_max_tokens(wire, r.body) for r in server.requests[before:]} == {defaults[task]}, task


def test_a_partial_mapping_keeps_the_other_defaults(fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url, max_tokens={"seniority": 16})
    run_requests(settings, fit_requests(["p"], 1), store)
    assert server.requests[-1].body["max_tokens"] == FIT_TOKENS.default
    run_requests(settings, [ChatRequest.from_prompt("q", task="seniority")], store)
    assert server.requests[-1].body["max_tokens"] == 16


@pytest.mark.parametrize("wire", WIRES)
def test_the_alias_probe_sends_the_seniority_limit(wire, fake_server, settings_for, fake_key):
    server = fake_server(wire)
    settings = settings_for(wire, server.base_url, max_tokens={"seniority": 40})
    probe_resolved_model(settings, settings.api_key())
    assert received_max_tokens(wire, server.requests[-1].body) == 40


def test_a_request_limit_set_by_its_builder_wins(fake_server, settings_for, store, fake_key):
    server = fake_server("openai")
    settings = settings_for("openai", server.base_url, max_tokens={"fit": 700})
    run_requests(settings, [ChatRequest.from_prompt("p", json_mode=True, task="fit", max_tokens=333)], store)
    assert server.requests[-1].body["max_tokens"] == 333


# ------------------------------------------------------------------ the rule, at load time


def entry(**options):
    return {
        "name": "claude-sonnet",
        "kind": "provider",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "api_key_env": "ANTHROPIC_API_KEY",
        **options,
    }


def test_every_task_declares_a_default_that_holds_its_minimum():
    limits = task_tokens()
    assert tuple(limits) == TASKS
    for task, limit in limits.items():
        assert limit.task == task and 1 <= limit.minimum <= limit.default, task
    assert limits["seniority"] is SENIORITY_TOKENS and limits["fit"] is FIT_TOKENS
    assert limits["judge"] is JUDGE_TOKENS and limits["generation"] is GENERATION_TOKENS


def test_a_fit_limit_of_16_is_refused_naming_the_entry():
    with pytest.raises(ModelConfigError) as caught:
        parse_models({"models": [entry(max_tokens={"seniority": 16, "fit": 16})]}, "/etc/audit/models.yaml")
    message = str(caught.value)
    assert message.startswith("/etc/audit/models.yaml: model 'claude-sonnet': max_tokens.fit is 16")
    assert f"at least {FIT_TOKENS.minimum}" in message and "fit" in message


def test_a_bare_number_too_small_for_a_task_is_refused_with_the_per_task_spelling():
    with pytest.raises(ModelConfigError) as caught:
        parse_models({"models": [entry(max_tokens=16)]}, "m.yaml")
    message = str(caught.value)
    assert message.startswith("m.yaml: model 'claude-sonnet': max_tokens: 16 is one limit for every task")
    assert f"fit (at least {FIT_TOKENS.minimum})" in message
    assert "max_tokens: {seniority: 16, pairwise: 16}" in message  # how to write it per task


def test_a_bare_number_that_holds_every_task_applies_to_every_task():
    big = max(limit.minimum for limit in task_tokens().values())
    spec = parse_models({"models": [entry(max_tokens=big)]}, "m.yaml")[0]
    assert ProviderSettings.from_spec(spec).max_tokens == {task: big for task in TASKS}


@pytest.mark.parametrize(
    "value, message",
    [
        ({"fitt": 600}, r"max_tokens has unknown task\(s\) fitt; the tasks are seniority, fit, judge, generation"),
        ({"fit": "600"}, r"max_tokens.fit must be a whole number of tokens, got '600'"),
        ({"fit": True}, r"max_tokens.fit must be a whole number of tokens, got True"),
        ({"fit": 600.5}, r"max_tokens.fit must be a whole number of tokens, got 600.5"),
        ({"judge": 100}, r"max_tokens.judge is 100, too few for the judge task's answer.*at least 256"),
        (None, r"max_tokens: null"),
        ([16, 600], r"max_tokens must be a mapping of task to limit"),
    ],
)
def test_bad_limits_are_refused_naming_the_entry_and_the_task(value, message):
    with pytest.raises(ModelConfigError, match=r"^m.yaml: model 'claude-sonnet': " + message):
        parse_models({"models": [entry(max_tokens=value)]}, "m.yaml")


def test_a_judge_entry_is_held_to_the_one_rule():
    # No rule of its own for judges: an entry whose judge limit is too small is refused as a model.
    data = {"models": [entry(enabled=False, max_tokens={"judge": 64})], "judges": ["claude-sonnet"]}
    with pytest.raises(ModelConfigError, match="max_tokens.judge is 64, too few"):
        parse_judges(data, "m.yaml")


def test_a_hand_built_spec_is_checked_by_the_settings_too():
    from resumebias_dagster.core.models.model_config import ModelSpec

    spec = ModelSpec("tiny", "provider", 0.7, 1, {"provider": "openai", "model": "m", "max_tokens": {"fit": 16}})
    with pytest.raises(ProviderConfigError, match=r"model 'tiny': max_tokens.fit is 16, too few"):
        ProviderSettings.from_spec(spec)


@pytest.mark.parametrize("name", ["models.yaml", "models_gpu.yaml"])
def test_the_packaged_configs_load_and_hold_every_task(name):
    specs = load_models(name, include_disabled=True)
    assert specs
    minimums = {task: limit.minimum for task, limit in task_tokens().items()}
    for spec in specs:
        if spec.kind != "provider":
            continue
        settings = ProviderSettings.from_spec(spec)
        assert set(settings.max_tokens) == set(TASKS), spec.name
        for task in TASKS:
            assert settings.max_tokens[task] >= minimums[task], (spec.name, task)
    load_judges(name)


def test_the_packaged_claude_entry_caps_only_the_label():
    spec = next(s for s in load_models("models.yaml", include_disabled=True) if s.name == "claude-sonnet")
    limits = ProviderSettings.from_spec(spec).max_tokens
    assert limits["seniority"] == 16
    assert limits["fit"] == FIT_TOKENS.default and limits["judge"] == JUDGE_TOKENS.default


def test_a_users_file_with_an_old_bare_limit_names_the_file(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(yaml.safe_dump({"models": [entry(max_tokens=16)]}))
    with pytest.raises(ModelConfigError, match=f"^{path}: model 'claude-sonnet': max_tokens: 16 is one limit"):
        load_models(str(path))
