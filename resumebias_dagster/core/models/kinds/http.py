"""``kind: http``: a scoring endpoint of the user's (``url``, ``body`` template, ``answer``
paths, optional ``method``, ``headers``, ``api_key_env``, limits, pacing ``min_interval_s`` and
``order_seed``, a ``version`` source; ``core/models/http_endpoint.py``), called through the transport once per item
and run. It runs the tasks its answer paths read."""

from __future__ import annotations

from resumebias_dagster.core.models.http_endpoint import HttpEndpointError, endpoint_from_entry, http_tasks
from resumebias_dagster.core.models.kinds.base import ModelKind
from resumebias_dagster.core.models.kinds.blind import check_blind
from resumebias_dagster.core.models.spec import ModelConfigError
from resumebias_dagster.core.models.trust import ModelTrustError, check_reach


def _check(entry, where: str) -> None:
    try:
        check_reach(entry, where)
        check_blind(entry, where)
        endpoint_from_entry(entry, where)
    except (ModelTrustError, HttpEndpointError) as exc:
        raise ModelConfigError(str(exc)) from None


def _predict(spec, work, runtime, progress):
    return work.with_http(spec, runtime.run_for(spec.name, progress))


KIND = ModelKind(
    name="http",
    summary="a scoring endpoint of the user's, one call per résumé and run",
    fields=frozenset(
        {
            "url",
            "method",
            "body",
            "headers",
            "api_key_env",
            "answer",
            "max_concurrency",
            "requests_per_minute",
            "timeout_s",
            "max_retries",
            "retry_timeouts",
            "retry_initial_delay_s",
            "min_interval_s",
            "order_seed",
            "allow_any_key_env",
            "allow_host_header",
            "version",
            "price_per_call",
        }
    ),
    required=frozenset({"url", "body", "answer"}),
    tasks=("seniority", "fit"),
    predict=_predict,
    deterministic=True,
    check=_check,
    tasks_of=http_tasks,
    ui_kind=lambda spec: "api",
)
