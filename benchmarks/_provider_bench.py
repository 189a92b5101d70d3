"""Shared pieces of the provider benchmarks: a fake provider in its own process, a model."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from resumebias_dagster.core.models.model_config import parse_models
from resumebias_dagster.core.providers import ProviderSettings

FAKE_KEY_ENV = "RESUMEBIAS_BENCH_KEY"
FAKE_KEY = "sk-bench-not-a-real-key"
PROVIDER_OF_WIRE = {"openai": "openai", "anthropic": "anthropic", "gemini": "google"}
# The scorer wire is a scoring endpoint of the user's (kind http), not a provider.
SCORER_BODY = (
    '{"id": {{ id | tojson }}, "resume": {{ resume | tojson }}, "job_description": {{ job_description | tojson }}}'
)


@contextmanager
def fake_server(wire: str, *args: str):
    """A fake provider API in a separate process; yields its base URL."""
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "resumebias_dagster.testing.fake_providers",
                "--wire",
                wire,
                "--port-file",
                str(port_file),
                *args,
            ],
        )
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("fake provider server did not start")
                time.sleep(0.02)
            root = f"http://127.0.0.1:{port_file.read_text()}"
            yield root + {"openai": "/v1", "scorer": "/score"}.get(wire, "")
        finally:
            proc.terminate()
            proc.wait(10)


def server_stats(base_url: str, settle_s: float = 5.0) -> dict:
    """The fake server's counts, once every request it read has an outcome (a request the
    client abandoned gets its outcome only when the server's stall ends)."""
    import json
    import urllib.request

    root = base_url.removesuffix("/v1").removesuffix("/score")
    deadline = time.monotonic() + settle_s
    while True:
        with urllib.request.urlopen(f"{root}/_stats", timeout=10) as response:
            stats = json.load(response)
        if sum(stats["outcomes"].values()) >= stats["requests"] or time.monotonic() > deadline:
            return stats
        time.sleep(0.05)


def model_entry(wire: str, base_url: str, **options) -> dict:
    if wire == "scorer":
        options.pop("max_tokens", None)  # an endpoint's answer has no token limit
        return {
            "name": "bench-scorer",
            "kind": "http",
            "url": base_url,
            "body": SCORER_BODY,
            "answer": {"score": "$.result.score", "recommend": "$.result.decision", "label": "$.seniority"},
            "api_key_env": FAKE_KEY_ENV,
            "runs_per_cell": 1,
            **options,
        }
    return {
        "name": f"bench-{wire}",
        "kind": "provider",
        "provider": PROVIDER_OF_WIRE[wire],
        "model": {"openai": "gpt-5-mini", "anthropic": "claude-haiku-4-5", "gemini": "gemini-2.5-flash"}[wire],
        "base_url": base_url,
        "api_key_env": FAKE_KEY_ENV,
        "temperature": 0.7,
        "runs_per_cell": 1,
        **options,
    }


def settings_for(wire: str, base_url: str, **options) -> ProviderSettings:
    spec = parse_models({"models": [model_entry(wire, base_url, **options)]}, "benchmark")[0]
    return ProviderSettings.from_spec(spec)


def bench_environ() -> dict[str, str]:
    return {**os.environ, FAKE_KEY_ENV: FAKE_KEY}
