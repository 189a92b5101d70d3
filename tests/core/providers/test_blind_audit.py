"""A blind audit (issue 39): what a scoring endpoint (``kind: http``) receives names no probe,
variant, axis, group, name pool, résumé or job description; the calls go out in a seeded
shuffled order, not grouped by résumé; an optional pacing spreads them over time; and a re-run
still pays for nothing, the store mapping each opaque id back to what it scored."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from resumebias_dagster import catalog
from resumebias_dagster.core.jd_audit.fit_task import predict_fit
from resumebias_dagster.core.models.model_config import ModelConfigError, parse_models
from resumebias_dagster.core.models.runtime import ModelRuntime
from resumebias_dagster.core.providers import ProviderSettings, run_requests
from resumebias_dagster.core.providers.types import ProviderConfigError

KEY_ENV = "ACME_SCORER_KEY"
KEY = "acme-secret-key-0123456789"
BODY = (
    '{"candidate_id": {{ id | tojson }}, "resume": {{ resume | tojson }}, '
    '"job_description": {{ job_description | tojson }}, "run": {{ run }}}'
)
ANSWER = {"score": "$.result.score", "recommend": "$.result.decision"}
JD = "backend-python-engineer"
JD_TEXT = "Software developer for payments: Python, PostgreSQL and Kubernetes."
# Variants named as the catalog names them, one of each arm.
VARIANTS = (
    ("baseline", "baseline", "baseline", ""),
    ("firstName_black_female", "probe", "firstName", "black_female"),
    ("careerGap_caregiving", "probe", "careerGap", "caregiving"),
    ("promptInjection_explicit", "prompt_injection", "promptInjection", "explicit"),
    ("placebo_blank_line", "placebo", "placebo", "blank_line"),
)
RESUME_IDS = ("u-b52965360e57", "u-0c4f1a9d2e33", "u-7e21bb90a4c8", "u-5d93f0c6e17a")
ID = re.compile(r"^[0-9a-f]{16}$")


def spec_for(url: str, **changes):
    entry = {"name": "acme", "kind": "http", "url": url, "body": BODY, "answer": ANSWER, "api_key_env": KEY_ENV}
    entry.update(changes)
    return parse_models({"models": [entry]}, "models.yaml")[0]


def runtime_for(spec, store, notes=None) -> ModelRuntime:
    settings = ProviderSettings.from_spec(spec)

    def provider_run(name, requests, progress):
        notify = notes.append if notes is not None else None
        return run_requests(settings, requests, store, environ={KEY_ENV: KEY}, progress=progress, notify=notify)

    return ModelRuntime(resolve_compute=lambda: None, cache_dir=Path("."), provider_run=provider_run)


def variants(resume_ids=RESUME_IDS) -> pd.DataFrame:
    """Every résumé under every variant; texts free of any catalog word, each one distinct."""
    rows = []
    for i, resume_id in enumerate(resume_ids):
        base = f"Jordan Lee {i}\nSUMMARY\nSoftware developer with {3 + i} years of Python and PostgreSQL.\n"
        for j, (variant, arm, axis, level) in enumerate(VARIANTS):
            rows.append((resume_id, variant, arm, axis, level, None, base + f"Detail {j}\n"))
    return pd.DataFrame(rows, columns=["resume_id", "variant", "arm", "axis", "level", "name", "text"])


def catalog_words() -> set[str]:
    """The words that name a probe: axis ids, arms, level names, group labels (sex, race or
    ethnicity) and the name pools' labels."""
    folder = Path(catalog.__file__).parent
    axes = yaml.safe_load((folder / "probe_axes.yaml").read_text(encoding="utf-8"))["axes"]
    words: set[str] = set()
    for axis_id, axis in axes.items():
        words |= {axis_id, axis["arm"], *map(str, axis["levels"])}
        for group in (axis.get("groups") or {}).values():
            words |= {str(v) for v in group.values()}
    pools = yaml.safe_load((folder / "name_pools.yaml").read_text(encoding="utf-8"))
    words |= set(pools["first_names"]) | set(pools["last_names"])
    # A bare number (a graduation-year level) names nothing alone; the variant names holding one are checked whole.
    return {w for w in words if not w.isdigit()}


FORBIDDEN = (
    catalog_words()
    | {v[0] for v in VARIANTS}
    | set(RESUME_IDS)
    | {JD, "audit", "bias", "resumebias", "probe", "variant", "axis", "arm", "baseline"}
)


def leaks(text: str) -> list[str]:
    """The forbidden words ``text`` holds as words of their own or parts of a compound
    (``firstName_black_female`` holds ``black`` and ``female``, not ``male``)."""
    lowered = text.lower()
    return sorted(w for w in FORBIDDEN if re.search(rf"(?<![a-z0-9]){re.escape(w.lower())}(?![a-z0-9])", lowered))


def sent(request) -> str:
    """All the screener received of one request: method, URL, headers and body."""
    headers = "\n".join(f"{k}: {v}" for k, v in request.headers.items())
    return f"{request.method} {request.path}\n{headers}\n{json.dumps(request.body, ensure_ascii=False)}"


def resume_behind(frame: pd.DataFrame, request) -> tuple[str, str]:
    """(résumé id, variant) of the text a request carried (each text is one variant's)."""
    by_text = {t: (r, v) for r, v, t in frame[["resume_id", "variant", "text"]].itertuples(index=False)}
    return by_text[request.body["resume"]]


def changes(sequence: list) -> int:
    return sum(a != b for a, b in zip(sequence, sequence[1:]))


def fit(spec, store, frame=None, notes=None):
    frame = variants() if frame is None else frame
    return predict_fit(spec, frame, jd=JD, jd_text=JD_TEXT, template="", runtime=runtime_for(spec, store, notes))


def test_the_screener_receives_no_probe_word_and_no_grouped_order(fake_server, store):
    server = fake_server("scorer")
    spec = spec_for(server.base_url, runs_per_cell=2)
    frame = variants()
    df, stats = fit(spec, store, frame)
    n = len(RESUME_IDS) * len(VARIANTS) * 2
    assert server.count == n and stats.calls_made == n and df["error"].isna().all()
    # Nothing a request carried names a probe, a variant, a group, a pool, the résumé or the JD.
    assert {i: leaks(sent(r)) for i, r in enumerate(server.requests) if leaks(sent(r))} == {}
    assert all(KEY not in json.dumps(r.body) for r in server.requests)
    ids = [r.body["candidate_id"] for r in server.requests]
    assert all(ID.match(i) for i in ids) and len(set(ids)) == n
    # Not grouped by résumé: grouped, the résumé would change 3 times in 40 requests; shuffled, about 29.
    behind = [resume_behind(frame, r) for r in server.requests]
    assert changes([resume for resume, _ in behind]) >= 20
    # Nor are the runs of one variant sent back to back.
    assert changes(behind) >= n - 8


def test_the_store_maps_each_opaque_id_back_and_a_rerun_pays_nothing(fake_server, store):
    server = fake_server("scorer")
    spec = spec_for(server.base_url, runs_per_cell=2)
    frame = variants(RESUME_IDS[:2])
    df, stats = fit(spec, store, frame)
    rows = {json.loads(r["request_json"])["wire_id"]: json.loads(r["request_json"]) for r in store.rows()}
    for request in server.requests:
        row = rows[request.body["candidate_id"]]
        resume_id, variant = resume_behind(frame, request)
        # The tag we keep names what was scored; the screener saw only the opaque id.
        assert row["tag"] == f"http|fit|{JD}:{resume_id}:{variant}" and row["sample_index"] == request.body["run"]
    # A re-run: every answer from the store, found by its real key; the same rows.
    again, stats2 = fit(spec, store, frame)
    assert stats2.calls_made == 0 and stats2.served_from_store == len(frame) * 2 and server.count == len(frame) * 2
    pd.testing.assert_frame_equal(again.drop(columns="latency_s"), df.drop(columns="latency_s"))
    # The scores are those of the texts sent: the shuffle moved no answer to another row.
    replies = {r.body["resume"]: r for r in server.requests}
    assert len(replies) == len(frame)
    expected = np.repeat([json.loads(server.answer(replies[t]))["result"]["score"] for t in frame["text"]], 2)
    assert df["score"].tolist() == list(expected)


def order_of(server, tmp_path, name, **changes):
    """The (résumé, variant) behind each call of a fresh run, one call at a time."""
    from resumebias_dagster.core.providers.store import ResponseStore

    spec = spec_for(server.base_url, max_concurrency=1, **changes)
    frame = variants(RESUME_IDS[:3])
    notes: list[str] = []
    before = len(server.requests)
    with ResponseStore(tmp_path / f"{name}.sqlite") as store:
        _, stats = fit(spec, store, frame, notes)
    return [resume_behind(frame, r) for r in server.requests[before:]], stats, notes


def test_the_order_is_seeded_and_the_seed_recorded(fake_server, tmp_path):
    server = fake_server("scorer")
    first, stats, notes = order_of(server, tmp_path, "a")
    again, _, _ = order_of(server, tmp_path, "b")
    other, stats_other, notes_other = order_of(server, tmp_path, "c", order_seed=7)
    assert first == again and first != other and sorted(first) == sorted(other)
    assert stats.as_dict()["order_seed"] == 0 and stats_other.as_dict()["order_seed"] == 7
    assert any("order seed 0" in line for line in notes) and any("order seed 7" in line for line in notes_other)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"min_interval_s": 0}, "models.yaml: model 'acme': min_interval_s must be a number of seconds > 0, got 0"),
        ({"min_interval_s": -2.5}, "min_interval_s must be a number of seconds > 0, got -2.5"),
        ({"min_interval_s": "1s"}, "min_interval_s must be a number of seconds > 0, got '1s'"),
        ({"min_interval_s": True}, "min_interval_s must be a number of seconds > 0, got True"),
        ({"order_seed": -1}, "models.yaml: model 'acme': order_seed must be a whole number >= 0, got -1"),
        ({"order_seed": 1.5}, "order_seed must be a whole number >= 0, got 1.5"),
        ({"order_seed": "zero"}, "order_seed must be a whole number >= 0, got 'zero'"),
    ],
)
def test_bad_pacing_and_seed_values_are_refused_naming_the_setting(changes, message):
    with pytest.raises(ModelConfigError) as exc:
        spec_for("https://screening.example.com/score", **changes)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_settings_made_in_code_refuse_a_bad_pacing_too():
    settings = ProviderSettings.from_spec(spec_for("https://screening.example.com/score"))
    from dataclasses import replace

    with pytest.raises(ProviderConfigError, match=r"model 'acme': min_interval_s must be a number of seconds > 0"):
        replace(settings, min_interval_s=-1.0).validate()


def test_a_paced_run_spreads_its_calls(fake_server, store):
    server = fake_server("scorer")
    interval = 0.2
    spec = spec_for(server.base_url, max_concurrency=4, min_interval_s=interval)
    frame = variants(RESUME_IDS[:1])
    _, stats = fit(spec, store, frame)
    assert stats.calls_made == server.count == len(frame)
    times = sorted(r.received_at for r in server.requests)
    gaps = np.diff(times)
    # Generous: two requests' trips to the server may differ; none comes close to a burst, and
    # the whole run takes at least most of the paced time.
    assert gaps.min() >= interval / 2 and times[-1] - times[0] >= 0.8 * interval * (len(frame) - 1)


def test_an_openai_batch_is_labelled_without_the_tools_name(fake_server, settings_for, fake_key):
    import asyncio

    from resumebias_dagster.core.providers.batch_openai import OpenAIBatchBackend
    from resumebias_dagster.core.providers.fanout import normalise
    from resumebias_dagster.core.providers.types import ChatRequest, Secret, request_key

    server = fake_server("openai")
    settings = settings_for("openai", server.base_url)
    request = normalise(settings, ChatRequest.from_prompt("Score this résumé.", json_mode=True, task="fit"))
    items = [(request_key(settings, request), request)]

    async def work():
        backend = OpenAIBatchBackend(settings, Secret(fake_key))
        try:
            batch_id = await backend.submit(items, "rb-new")
            labels = dict(server.batches.metadata[batch_id])
            # A batch labelled before the label lost the tool's name is still found.
            server.batches.metadata[batch_id] = {"resumebias_submission": "rb-old"}
            return labels, batch_id, await backend.find("rb-old")
        finally:
            await backend.aclose()

    labels, batch_id, found = asyncio.run(work())
    assert labels == {"submission": "rb-new"} and leaks(json.dumps(labels)) == [] and found == batch_id
