"""Answers written per second into the response store from 8 processes at once, for SQLite
(one machine) and PostgreSQL (shared by several).

Each process writes its own answers the way a provider run does: claim the key, then store
the answer and release the claim in one transaction (``--ops put``: the store alone). Rows
carry a 1,500-character prompt, like a résumé prompt. The PostgreSQL server is a private one
started here (``resumebias_dagster.testing.postgres``) with its durable defaults (fsync on);
it runs on this machine, so the figures leave out a network's round trips (each answer costs
two to four of them: claim and put).

Durability of each configuration:
- sqlite: ``synchronous=NORMAL``, the store's default: a commit survives the process dying.
- sqlite durable: ``synchronous=FULL`` (``durable=True``): it survives a power loss too.
- postgres: the server's defaults (``synchronous_commit=on``): a commit is on disk.
- postgres async commit: ``synchronous_commit=off`` (URL option): a server crash may lose the
  last few hundred milliseconds of commits.

Run: python benchmarks/bench_store_throughput.py [--processes 8] [--answers 1000] [--ops claim+put|put|both]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROMPT = "Classify the seniority of this résumé. " + "Experience: built data pipelines. " * 42


def worker(target: str, durable: bool, answers: int, prefix: str, start_at: float, ops: str) -> None:
    from resumebias_dagster.core.models.model_config import parse_models
    from resumebias_dagster.core.providers import ChatRequest, ChatResult, ProviderSettings, ResponseStore
    from resumebias_dagster.core.providers.store import CLAIMED, ClaimOwner

    entry = {
        "name": "bench",
        "kind": "provider",
        "provider": "openai",
        "model": "x",
        "base_url": "http://127.0.0.1:9/v1",
        "api_key_env": "",
    }
    settings = ProviderSettings.from_spec(parse_models({"models": [entry]}, "bench")[0])
    owner = ClaimOwner.this_process()
    requests = [ChatRequest.from_prompt(f"{PROMPT} #{prefix}-{i}") for i in range(answers)]
    results = [
        ChatResult(
            key=f"{prefix}-{i}",
            text="mid",
            input_tokens=420,
            output_tokens=1,
            attempts=1,
            billed_attempts=1,
            latency_s=0.2,
            resolved_model="x-2025",
        )
        for i in range(answers)
    ]
    with ResponseStore(target, durable=durable) as store:
        time.sleep(max(0.0, start_at - time.time()))
        started = time.time()
        for request, result in zip(requests, results):
            if ops == "claim+put":
                assert store.claim(result.key, owner, 600) == CLAIMED
                store.put(settings, request, result, owner=owner)
            else:
                store.put(settings, request, result)
        ended = time.time()
    print(json.dumps({"started": started, "ended": ended, "answers": answers}))


def run(label: str, target: str, durable: bool, processes: int, answers: int, ops: str) -> float:
    from resumebias_dagster.core.providers import ResponseStore

    ResponseStore(target).close()  # created (and migrated) before the clock starts
    start_at = time.time() + 3.0
    children = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                target,
                str(int(durable)),
                str(answers),
                f"{ops}-p{i}",
                str(start_at),
                ops,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    outputs = [c.communicate(timeout=1800) for c in children]
    failed = [err[-2000:] for c, (_, err) in zip(children, outputs) if c.returncode]
    if failed:
        raise SystemExit(f"{label}: a worker failed:\n{failed[0]}")
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    wall = max(r["ended"] for r in reports) - min(r["started"] for r in reports)
    total = sum(r["answers"] for r in reports)
    with ResponseStore(target) as store:
        rows, claims = store.count(), len(store.claims())
    rate = total / wall
    print(
        f"{label:26s} {ops:9s} processes={processes} answers={total}  wall={wall:6.2f}s  "
        f"{rate:8.0f} answers/s  ({1000 * wall * processes / total:.2f} ms per answer per process)  "
        f"rows={rows} claims_left={claims}",
        flush=True,
    )
    return rate


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        target, durable, answers, prefix, start_at, ops = sys.argv[2:8]
        worker(target, durable == "1", int(answers), prefix, float(start_at), ops)
        return 0
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--answers", type=int, default=1000, help="answers written by each process")
    parser.add_argument("--ops", default="both", choices=["claim+put", "put", "both"])
    parser.add_argument("--backend", default="both", choices=["sqlite", "postgres", "both"])
    args = parser.parse_args()
    ops = ["claim+put", "put"] if args.ops == "both" else [args.ops]
    with tempfile.TemporaryDirectory() as tmp:
        if args.backend in ("sqlite", "both"):
            for op in ops:
                run("sqlite", str(Path(tmp) / f"normal-{op}.sqlite"), False, args.processes, args.answers, op)
                run("sqlite durable", str(Path(tmp) / f"full-{op}.sqlite"), True, args.processes, args.answers, op)
        if args.backend in ("postgres", "both"):
            from resumebias_dagster.testing.postgres import PostgresServer

            with PostgresServer(fast=False) as server:
                for op in ops:
                    run("postgres", server.url(server.create_database()), False, args.processes, args.answers, op)
                    run(
                        "postgres async commit",
                        server.url(server.create_database()) + "?options=-csynchronous_commit%3Doff",
                        False,
                        args.processes,
                        args.answers,
                        op,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
