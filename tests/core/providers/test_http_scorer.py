"""``kind: http`` end to end: a scoring service listening on 127.0.0.1 (the fake server's scorer
wire), reached through the response store and the fan-out, read by the two tasks."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from resumebias_dagster.core.jd_audit.fit_task import predict_fit
from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.models.runtime import ModelRuntime
from resumebias_dagster.core.providers import ProviderSettings, run_requests
from resumebias_dagster.core.providers.types import ProviderConfigError
from resumebias_dagster.core.seniority.task import predict_seniority
from resumebias_dagster.core.tables import FitScores, SeniorityPredictions, columns
from resumebias_dagster.testing import fake_providers as fp
from resumebias_dagster.testing.fake_providers.replies import Reply
from resumebias_dagster.testing.fake_providers.scorer import GAP_PENALTY, score_reply

KEY_ENV = "ACME_SCORER_KEY"
KEY = "acme-secret-key-0123456789"
BODY = (
    '{"id": {{ id | tojson }}, "resume": {{ resume | tojson }}, '
    '"job_description": {{ job_description | tojson }}, "run": {{ run }}}'
)
ANSWER = {"score": "$.result.score", "recommend": "$.result.decision", "label": "$.seniority"}


def spec_for(url: str, **changes):
    entry = {"name": "acme", "kind": "http", "url": url, "body": BODY, "answer": ANSWER, "api_key_env": KEY_ENV}
    entry.update(changes)
    return parse_models({"models": [entry]}, "models.yaml")[0]


def runtime_for(spec, store) -> ModelRuntime:
    settings = ProviderSettings.from_spec(spec)

    def provider_run(name, requests, progress):
        return run_requests(settings, requests, store, environ={KEY_ENV: KEY}, progress=progress)

    return ModelRuntime(resolve_compute=lambda: None, cache_dir=store_path(store), provider_run=provider_run)


def store_path(store):
    return getattr(store, "path", None)


def probe_variants(n=3):
    rows = []
    for i in range(n):
        text = f"Jane Doe {i}\nSUMMARY\nPython engineer with {2 + 3 * i} years of experience.\n"
        rows.append((f"r{i}", "baseline", "baseline", "baseline", "", None, text))
        rows.append((f"r{i}", "careerGap_1y", "probe", "careerGap", "1y", None, text + "Career break 2019-2020\n"))
    return pd.DataFrame(rows, columns=["resume_id", "variant", "arm", "axis", "level", "name", "text"])


def seniority_variants(n=3):
    rows = [("style", i, "neutral", f"Jane Doe\nPython engineer, {2 + 4 * i} years.", "mid", None) for i in range(n)]
    return pd.DataFrame(rows, columns=["variant_kind", "original_idx", "variant", "text", "true_seniority", "name"])


def test_fit_scores_through_the_store_and_the_key_only_in_the_header(fake_server, store):
    server = fake_server("scorer")
    spec = spec_for(server.base_url, runs_per_cell=2)
    jd_text = "Senior Python engineer for payments, Kubernetes, PostgreSQL and AWS"
    df, stats = predict_fit(
        spec, probe_variants(), jd="swe", jd_text=jd_text, template="", runtime=runtime_for(spec, store)
    )
    assert list(df.columns) == columns(FitScores)
    assert len(df) == 6 * 2 and server.count == 12 and stats.calls_made == 12
    sent = [r.body for r in server.requests]
    # Every variant and run sent once, each under an opaque id of its own (the store maps it back).
    assert sorted((b["resume"], b["run"]) for b in sent) == sorted(
        (t, run) for t in probe_variants()["text"] for run in (0, 1)
    )
    assert len({b["id"] for b in sent}) == 12 and all(len(b["id"]) == 16 and "swe" not in b["id"] for b in sent)
    tags = {json.loads(r["request_json"])["wire_id"]: json.loads(r["request_json"])["tag"] for r in store.rows()}
    assert sorted(tags[b["id"]] for b in sent) == sorted(
        f"http|fit|swe:r{i}:{v}" for i in range(3) for v in ("baseline", "careerGap_1y") for run in (0, 1)
    )
    assert all(r.api_key == KEY for r in server.requests)
    assert all(KEY not in json.dumps(b) for b in sent)
    # The planted defect is what the rows show: a career break costs GAP_PENALTY points.
    expected = [
        score_reply({"resume": t, "job_description": jd_text})["result"]["score"] for t in probe_variants()["text"]
    ]
    assert df["score"].tolist() == list(np.repeat(expected, 2))
    gap = df[df["axis"] == "careerGap"]["score"].to_numpy() - df[df["axis"] == "baseline"]["score"].to_numpy()
    assert np.allclose(gap, -GAP_PENALTY)
    assert set(df["recommend"]) <= {"yes", "no", "maybe"} and df["error"].isna().all()
    assert df["note"].unique().tolist() == ["scored by an HTTP endpoint: it writes no justification"]
    rows = list(store.rows())
    assert len(rows) == 12 and all(KEY not in json.dumps(r, default=str) for r in rows)
    # Resumable: a second run pays for nothing.
    again, stats2 = predict_fit(
        spec, probe_variants(), jd="swe", jd_text=jd_text, template="", runtime=runtime_for(spec, store)
    )
    assert stats2.calls_made == 0 and server.count == 12
    pd.testing.assert_frame_equal(again.drop(columns="latency_s"), df.drop(columns="latency_s"))


def test_seniority_labels_and_distributions(fake_server, store):
    server = fake_server("scorer")
    spec = spec_for(server.base_url)
    df, stats = predict_seniority(spec, seniority_variants(), runtime_for(spec, store), template="")
    assert list(df.columns) == columns(SeniorityPredictions)
    assert df["prediction"].tolist() == ["junior", "mid", "senior"] and stats.calls_made == 3
    assert df["p_mid"].isna().all()
    # One reply per résumé (by its years), whatever order the calls go out in.
    replies = {
        "2": {"seniority": {"junior": 0.1, "mid": 0.2, "senior": 0.7}},
        "6": {"seniority": "Mid"},
        "10": {"x": 1},
    }
    server2 = fake_server(
        "scorer", answer=lambda request: json.dumps(replies[request.body["resume"].split(", ")[1].split()[0]])
    )
    spec2 = spec_for(server2.base_url, answer={"label": "$.seniority"})
    df2, stats2 = predict_seniority(spec2, seniority_variants(), runtime_for(spec2, store), template="")
    assert df2["prediction"].tolist() == ["senior", "mid", "unknown"]
    assert df2.loc[0, ["p_junior", "p_mid", "p_senior"]].tolist() == [0.1, 0.2, 0.7]
    assert df2.loc[2, "error"] == "unparsable: $ has no 'seniority' (it holds keys ['x'])"
    assert stats2.errors["unparsable"] == 1


def test_failed_calls_are_rows_and_retries_are_ours(fake_server, store):
    server = fake_server("scorer")
    server.script(fp.server_error(500), fp.rate_limited(), fp.status(400, "bad input"))
    spec = spec_for(server.base_url, max_concurrency=1, retry_initial_delay_s=0.01, max_retries=3)
    df, stats = predict_fit(
        spec, probe_variants(2), jd="swe", jd_text="Python", template="", runtime=runtime_for(spec, store)
    )
    # 500 and 429 were sent again; the 400 is the endpoint refusing the request: a row.
    assert stats.http_attempts == server.count == 6 and stats.calls_made == 4
    errors = df["error"].dropna().tolist()
    assert errors == ['bad_request: HTTP 400: {"error": {"code": 400, "message": "bad input"}}']


def test_a_wrong_key_stops_the_run_and_is_never_echoed(fake_server, store):
    server = fake_server("scorer")
    server.script(fp.auth_error(echo_key=True))
    spec = spec_for(server.base_url, max_concurrency=1)
    df, stats = predict_fit(
        spec, probe_variants(2), jd="swe", jd_text="Python", template="", runtime=runtime_for(spec, store)
    )
    assert server.count == 1 and stats.errors["auth"] == 1 and stats.errors["aborted"] == 3
    (auth,) = [e for e in df["error"] if not e.startswith("aborted")]
    assert auth.startswith("auth: HTTP 401") and KEY not in auth
    assert all(KEY not in json.dumps(r, default=str) for r in store.rows())


def test_a_redirect_is_not_followed(fake_server, store):
    server = fake_server("scorer")
    elsewhere = fake_server("scorer")
    server.script(Reply("status", status=307, message="moved", headers=(("location", elsewhere.base_url),)))
    spec = spec_for(server.base_url, max_concurrency=1)
    df, _ = predict_fit(
        spec, probe_variants(1), jd="swe", jd_text="Python", template="", runtime=runtime_for(spec, store)
    )
    assert elsewhere.count == 0
    (redirected,) = df["error"].dropna()
    assert redirected.startswith("bad_request: HTTP 307")


def test_unreadable_replies_everywhere_stop_the_task_and_cost_nothing_to_fix(fake_server, store):
    server = fake_server("scorer")
    wrong = spec_for(server.base_url, answer={"score": "$.score"})
    with pytest.raises(
        ValueError,
        match=r"models.acme \(kind http\): none of the 4 replies could be read for the fit task with answer.score '\$.score': \$ has no 'score' \(it holds keys \['result', 'seniority'\]\).*fix the answer paths",
    ):
        predict_fit(
            wrong, probe_variants(2), jd="swe", jd_text="Python", template="", runtime=runtime_for(wrong, store)
        )
    fixed = spec_for(server.base_url, answer={"score": "$.result.score"})
    df, stats = predict_fit(
        fixed, probe_variants(2), jd="swe", jd_text="Python", template="", runtime=runtime_for(fixed, store)
    )
    assert stats.calls_made == 0 and server.count == 4 and df["score"].notna().all()


def test_a_malformed_reply_is_kept_as_it_came_and_final(fake_server, store):
    server = fake_server("scorer")
    server.script(fp.raw_body(b"<html>oops</html>"))
    spec = spec_for(server.base_url, max_concurrency=1)
    df, stats = predict_fit(
        spec, probe_variants(1), jd="swe", jd_text="Python", template="", runtime=runtime_for(spec, store)
    )
    # The first call made (the calls go out shuffled) got the malformed reply.
    (malformed,) = df["error"].dropna()
    assert malformed.startswith("malformed_response: HTTP 200 reply is not UTF-8 JSON")
    stored = [r for r in store.rows() if r["error_kind"] == "malformed_response"]
    assert [r["text"] for r in stored] == ["<html>oops</html>"] and stored[0]["done"]


def test_the_templates_are_part_of_the_key(fake_server, store):
    server = fake_server("scorer")
    a = spec_for(server.base_url)
    b = spec_for(server.base_url, body=BODY.replace('"run"', '"attempt"'))
    for spec in (a, b):
        predict_fit(spec, probe_variants(1), jd="swe", jd_text="Python", template="", runtime=runtime_for(spec, store))
    assert server.count == 4


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://10.0.0.5:8000/score", "model 'acme': url http://10.0.0.5:8000/score is plain HTTP to another machine"),
        ("ftp://127.0.0.1/score", r"model 'acme': url must be an http\(s\) URL"),
    ],
)
def test_a_url_the_key_must_not_reach_is_refused(url, message):
    with pytest.raises(ProviderConfigError, match=message):
        ProviderSettings.from_spec(spec_for(url))


def test_a_missing_key_is_named_before_any_call(fake_server):
    from resumebias_dagster.core.providers.types import check_credentials

    server = fake_server("scorer")
    with pytest.raises(ProviderConfigError, match=f"model 'acme' .*set the environment variable {KEY_ENV}"):
        check_credentials([ProviderSettings.from_spec(spec_for(server.base_url))], environ={})
    assert server.count == 0
