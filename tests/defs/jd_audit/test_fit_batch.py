"""Fit scoring in batch mode through the asset: every answer from one provider batch, stored once."""

import dagster as dg

from resumebias_dagster.core.providers.store import ResponseStore
from resumebias_dagster.defs.jd_audit import fit
from resumebias_dagster.defs.seniority_study import resumes
from resumebias_dagster.resources.providers import ProvidersResource
from tests.defs.jd_audit.test_jd_audit import ASSETS, FIT_SCORES, JDS, audit_env  # noqa: F401 - the fixture


def test_fit_scores_in_batch_mode_store_every_answer_once(audit_env):  # noqa: F811 - the fixture
    server, resources = audit_env
    dg.materialize(
        ASSETS,
        selection=[resumes.base_resumes, fit.job_descriptions, fit.probe_variants],
        resources=resources,
        run_config={
            "ops": {
                "base_resumes": {"config": {"n_per_level": 3, "seed": 0}},
                "probe_variants": {"config": {"levels": ["senior"]}},
            }
        },
    )
    live = resources["providers"]
    # The run config turns batch mode on for every provider model of the run.
    batched = {**resources, "providers": ProvidersResource(**{**live.model_dump(), "batch": True})}
    key = dg.MultiPartitionKey({"model": "fake-judge", "jd": JDS[0]})
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(ASSETS, selection=[FIT_SCORES], partition_key=key, resources=batched, instance=instance)
    scores = result.output_for_node("fit_scores")
    assert server.count == 0, "no live call"
    assert server.batches.submissions == 1
    assert server.batches.items_submitted == len(scores)
    assert scores["score"].notna().all()
    logs = [e.user_message for e in instance.all_logs(result.run_id)]
    assert any("batch" in line and "submitted (" in line for line in logs)
    with ResponseStore(live.store_path) as store:
        assert store.count(done=True) == len(scores)
        assert [b["state"] for b in store.batches()] == ["collected"]
    again = dg.materialize(ASSETS, selection=[FIT_SCORES], partition_key=key, resources=batched)
    assert again.success
    assert server.batches.submissions == 1 and server.count == 0, "answered by the response store"
