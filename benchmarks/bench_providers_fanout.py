"""Fan-out: 2,000 calls to a loopback provider answering in 200 ms, 64 at a time.

Ideal wall time is 2,000 x 0.2 / 64 = 6.25 s; the run must take at most 1.15x that. The
fake server runs in a process of its own; the client is the real SDK through the runner,
with every response written to the store as it returns (as in production).

Run: python benchmarks/bench_providers_fanout.py [--wire openai|anthropic|gemini|all]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path

from _provider_bench import bench_environ, fake_server, server_stats, settings_for

from resumebias_dagster.core.providers import ChatRequest, ResponseStore, run_requests

TARGET = 1.15


def bench(wire: str, calls: int, latency: float, concurrency: int) -> float:
    with fake_server(wire, "--latency-s", str(latency)) as base_url, tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(wire, base_url, max_concurrency=concurrency, timeout_s=30, max_tokens=5)
        # The SDK import (0.2-0.7 s, once per process) is not part of the fan-out.
        importlib.import_module(f"resumebias_dagster.core.providers.{settings.provider}_client")
        requests = [ChatRequest.from_prompt(f"Classify résumé number {i}.") for i in range(calls)]
        with ResponseStore(Path(tmp) / "responses.sqlite") as store:
            results, stats = run_requests(settings, requests, store, environ=bench_environ())
            rows = store.count()
        ideal = calls * latency / concurrency
        ratio = stats.wall_s / ideal
        served = server_stats(base_url)["requests"]
        ok = sum(r.ok for r in results)
        print(
            f"{wire:9s} calls={calls} concurrency={concurrency} latency={latency}s  measured={stats.wall_s:.2f}s "
            f"ideal={ideal:.2f}s  measured/ideal={ratio:.3f} (target <= {TARGET})  answered={ok} "
            f"server_requests={served} store_rows={rows}"
        )
        return ratio


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wire", default="openai", choices=["openai", "anthropic", "gemini", "all"])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    wires = ["openai", "anthropic", "gemini"] if args.wire == "all" else [args.wire]
    ratios = [bench(w, args.calls, args.latency, args.concurrency) for w in wires]
    return 0 if max(ratios) <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
