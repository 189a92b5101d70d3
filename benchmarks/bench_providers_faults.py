"""Faults: 10,000 calls to a loopback provider that fails 20% of requests transiently.

Each request, retries included, independently meets a fault with probability 0.2: 429 with
Retry-After, 500, 503 (with retry-after-ms), a connection reset, or a stall past the
client's timeout. The SDKs retry (max_retries 3). Checked afterwards:

- nothing lost: every request ends answered or as a typed error row;
- nothing billed twice: requests seen by the server = the client's HTTP attempts
  (answers + retried faults + final faults), and answers delivered by the server =
  answered rows in the store, one row per key. (A request the client gave up on at its
  timeout is counted apart, "client_gone": a real provider may bill it, no client can
  prevent that, and the retry is what makes the call succeed.);
- a second run calls exactly the keys that ended in a transient error.

Run: python benchmarks/bench_providers_faults.py [--wire openai|anthropic|gemini|all] [--calls N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _provider_bench import bench_environ, fake_server, server_stats, settings_for

from resumebias_dagster.core.providers import TRANSIENT_KINDS, ChatRequest, ResponseStore, run_requests


def bench(wire: str, calls: int, rate: float) -> bool:
    faults = "rate_limited,server_error,unavailable,reset,timeout"
    args = ("--fault-rate", str(rate), "--faults", faults, "--retry-after-s", "0.01", "--timeout-delay-s", "1.0",
            "--latency-s", "0.005", "--seed", "7")
    with fake_server(wire, *args) as base_url, tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(wire, base_url, max_concurrency=64, timeout_s=0.5, max_retries=3,
                                retry_initial_delay_s=0.05, max_tokens=5)
        requests = [ChatRequest.from_prompt(f"Classify résumé number {i}.") for i in range(calls)]
        with ResponseStore(Path(tmp) / "responses.sqlite") as store:
            started = time.perf_counter()
            results, stats = run_requests(settings, requests, store, environ=bench_environ())
            wall = time.perf_counter() - started
            server = server_stats(base_url)
            rows = list(store.rows())
            kinds = Counter(r.error_kind or "answered" for r in results)
            answered = kinds["answered"]
            lost = [r for r in results if r.error_kind is None and not r.text]
            untyped = [r for r in results if r.error_kind is not None and r.error_kind not in TRANSIENT_KINDS]
            answered_rows = sum(1 for r in rows if r["error_kind"] is None)
            checks = {
                "every request answered or a typed error row": len(results) == calls and not lost and not untyped,
                "server requests == client attempts (answers + retries + final faults)":
                    server["requests"] == stats.http_attempts,
                "answers delivered == answered rows (nothing billed twice)":
                    server["outcomes"].get("answered", 0) == answered == answered_rows,
                "one store row per key": len(rows) == calls == len({r["key"] for r in rows}),
            }
            transient = sum(1 for r in results if r.error_kind in TRANSIENT_KINDS)
            before = server["requests"]
            _, second = run_requests(settings, requests, store, environ=bench_environ())
            after = server_stats(base_url)["requests"]
            checks["second run calls exactly the transient rows"] = second.calls_made == transient
            checks["second run: server requests == its attempts"] = after - before == second.http_attempts
        faulted = {k: v for k, v in server["outcomes"].items() if k != "answered"}
        print(f"{wire:9s} calls={calls} fault rate={rate:.0%} wall={wall:.1f}s  server requests={server['requests']} "
              f"= answered {server['outcomes'].get('answered', 0)} + faulted {sum(faulted.values())} {faulted}")
        errors = {k: v for k, v in kinds.items() if k != "answered"}
        print(f"{'':9s} client: answered={answered} typed errors={errors} "
              f"http attempts={stats.http_attempts} retries={stats.retries} store rows={len(rows)}; "
              f"second run made {second.calls_made} calls for {transient} transient rows")
        for name, ok in checks.items():
            print(f"{'':9s} [{'ok' if ok else 'FAIL'}] {name}")
        return all(checks.values())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wire", default="openai", choices=["openai", "anthropic", "gemini", "all"])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=0.2)
    args = parser.parse_args()
    wires = ["openai", "anthropic", "gemini"] if args.wire == "all" else [args.wire]
    return 0 if all([bench(w, args.calls, args.rate) for w in wires]) else 1


if __name__ == "__main__":
    sys.exit(main())
