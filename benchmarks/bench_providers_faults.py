"""Faults: 10,000 calls to a loopback provider that fails 20% of requests transiently, and a
timeout storm (10% of requests stall past the client's timeout).

Each request, retries included, independently meets a fault with probability ``--rate``: 429
with Retry-After, 500, 503 (with retry-after-ms), a connection reset, or a stall past the
client's timeout. The SDKs retry (max_retries 3), except a timed-out generation, which by
default is not sent again within the run (``retry_timeouts: false``): the provider may still
be generating, and billing, the abandoned attempt. Checked afterwards:

- nothing lost: every request ends answered or as a typed error row;
- nothing billed twice: requests seen by the server = the client's HTTP attempts
  (answers + retried faults + final faults), answers delivered by the server = answered rows
  in the store, one row per key, and the client's billed attempts (answers + attempts
  abandoned at their timeout) = the server's answers + the requests whose client was gone;
- a second run calls exactly the keys that ended in a transient error.

The timeout storm reports billed attempts per answered call after both runs, with the
default policy and with ``retry_timeouts: true`` (the SDKs' retries of a stalled generation).

Hostile answers (issue 25): the same faults, plus 2xx answers hostile to parsing: a lone
surrogate in the answer (the JSON escape \\ud800), the message content as a list of parts, a
body nested deeper than the SDK's JSON parser recurses, bytes that are not UTF-8, and (issue 40)
a score of 5,000 digits or 10**400, which the task's reader must turn into a row's reason. Checked
besides: every 2xx body the server sent, over both runs, is in exactly one store row (an
answer, or a malformed_response row keeping the body as it came), so none is lost and no key
is paid for twice; each lone surrogate is stored exactly; the text handed to the tasks is
valid UTF-8.

The scorer wire (``--wire scorer``) is a scoring endpoint of the user's (``kind: http``,
``resumebias_dagster/testing/fake_providers/scorer.py``): the same faults and checks, its
retries ours rather than an SDK's.

Run: python benchmarks/bench_providers_faults.py [--wire openai|anthropic|gemini|scorer|all] [--calls N]
     python benchmarks/bench_providers_faults.py --storm-only --calls 2000
     python benchmarks/bench_providers_faults.py --hostile-only --wire all
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _provider_bench import bench_environ, fake_server, server_stats, settings_for

from resumebias_dagster.core.providers import TERMINAL_KINDS, TRANSIENT_KINDS, ChatRequest, ResponseStore, run_requests
from resumebias_dagster.core.providers.http_scorer import http_requests
from resumebias_dagster.testing.fake_providers import HOSTILE_KINDS

FAULTS = "rate_limited,server_error,unavailable,reset,timeout"
TYPED_KINDS = TRANSIENT_KINDS | TERMINAL_KINDS


def _valid_utf8(text: str | None) -> bool:
    try:
        (text or "").encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _bodies(outcomes: dict) -> int:
    """2xx bodies the server sent: answers and hostile answers (each billed)."""
    return outcomes.get("answered", 0) + sum(v for k, v in outcomes.items() if k.startswith("hostile_"))


def _all_readable(wire: str, settings, results) -> bool:
    """Whether the task's reader turns every answer into a score or a row's reason without
    raising (issue 40: a score of 5,000 digits raised on every re-run of its partition)."""
    from resumebias_dagster.core.common.parsing import parse_json_object
    from resumebias_dagster.core.jd_audit.fit_task import parse_fit_answer
    from resumebias_dagster.core.providers.http_client import endpoint_of_settings

    try:
        for r in results:
            if not r.ok:
                continue
            if wire == "scorer":
                endpoint_of_settings(settings).read_answer(r.text, "fit")
            else:
                parsed = parse_json_object(r.text)
                if parsed.ok:
                    parse_fit_answer(parsed.value)
    except Exception as exc:  # noqa: BLE001 - what the check looks for
        print(f"          unreadable answer: {type(exc).__name__}: {str(exc)[:120]}")
        return False
    return True


def bench(
    wire: str,
    calls: int,
    rate: float,
    faults: str = FAULTS,
    retry_timeouts: bool = False,
    label: str = "faults",
    stall_share: float = 0.0,
) -> bool:
    args = (
        "--fault-rate",
        str(rate),
        "--faults",
        faults,
        "--retry-after-s",
        "0.01",
        "--timeout-delay-s",
        "1.0",
        "--latency-s",
        "0.005",
        "--seed",
        "7",
        "--stall-share",
        str(stall_share),
    )
    with fake_server(wire, *args) as base_url, tempfile.TemporaryDirectory() as tmp:
        settings = settings_for(
            wire,
            base_url,
            max_concurrency=64,
            timeout_s=0.5,
            max_retries=3,
            retry_initial_delay_s=0.05,
            max_tokens={"seniority": 5},
            retry_timeouts=retry_timeouts,
        )
        requests = bench_requests(wire, calls)
        with ResponseStore(Path(tmp) / "responses.sqlite") as store:
            started = time.perf_counter()
            results, stats = run_requests(settings, requests, store, environ=bench_environ())
            wall = time.perf_counter() - started
            server = server_stats(base_url)
            rows = list(store.rows())
            kinds = Counter(r.error_kind or "answered" for r in results)
            answered = kinds["answered"]
            lost = [r for r in results if r.error_kind is None and not r.text]
            untyped = [r for r in results if r.error_kind is not None and r.error_kind not in TYPED_KINDS]
            answered_rows = sum(1 for r in rows if r["error_kind"] is None)
            body_rows = sum(1 for r in rows if r["text"] is not None)
            bodies = _bodies(server["outcomes"])
            server_billed = bodies + server["outcomes"].get("client_gone", 0)
            checks = {
                "every request answered or a typed error row": len(results) == calls and not lost and not untyped,
                "server requests == client attempts (answers + retries + final faults)": server["requests"]
                == stats.http_attempts,
                "answers delivered == answered rows (nothing billed twice)": bodies == body_rows
                and answered == answered_rows,
                "client billed attempts == server answers + abandoned requests": stats.billed_attempts == server_billed,
                "one store row per key": len(rows) == calls == len({r["key"] for r in rows}),
                "no claim left behind": store.claims() == [],
            }
            hostile = {k: v for k, v in server["outcomes"].items() if k.startswith("hostile_")}
            if hostile:
                # A provider's answer text holds the surrogate itself; a scorer's reply is stored
                # as the body came, where it is the JSON escape.
                surrogate = (lambda t: "\\ud800" in t) if wire == "scorer" else (lambda t: t.endswith("\ud800"))
                checks["every lone surrogate stored exactly"] = sum(
                    1 for r in rows if r["text"] and surrogate(r["text"])
                ) == server["outcomes"].get("hostile_lone_surrogate", 0)
                checks["text handed to the tasks is valid UTF-8"] = all(
                    _valid_utf8(r.text) and _valid_utf8(r.error_message) for r in results
                )
                checks["every answer reads as a score or a reason (no partition blocked)"] = _all_readable(
                    wire, settings, results
                )
            # Keys whose row is not final: transient, and billed fewer than BILLED_CALL_LIMIT times.
            transient = sum(1 for r in rows if not r["done"])
            before = server["requests"]
            again, second = run_requests(settings, requests, store, environ=bench_environ())
            after = server_stats(base_url)
            if not stall_share:
                checks["second run calls exactly the transient rows"] = second.calls_made == transient
            checks["second run: server requests == its attempts"] = after["requests"] - before == second.http_attempts
            rows_after = list(store.rows())
            checks["both runs: every 2xx body in exactly one row (none lost, no key paid twice)"] = (
                _bodies(after["outcomes"]) == sum(1 for r in rows_after if r["text"] is not None)
                and len(rows_after) == calls
            )
            answered_total = sum(1 for r in again if r.ok)
            billed_total = stats.billed_attempts + second.billed_attempts
        faulted = {k: v for k, v in server["outcomes"].items() if k != "answered" and not k.startswith("hostile_")}
        mode = "retry_timeouts=true" if retry_timeouts else "retry_timeouts=false (default)"
        print(
            f"{wire:9s} [{label}, {mode}] calls={calls} fault rate={rate:.0%} wall={wall:.1f}s  "
            f"server requests={server['requests']} = answered {server['outcomes'].get('answered', 0)} "
            + (f"+ hostile {sum(hostile.values())} {hostile} " if hostile else "")
            + f"+ faulted {sum(faulted.values())} {faulted}"
        )
        errors = {k: v for k, v in kinds.items() if k != "answered"}
        print(
            f"{'':9s} client: answered={answered} typed errors={errors} "
            f"http attempts={stats.http_attempts} retries={stats.retries} billed attempts={stats.billed_attempts} "
            f"store rows={len(rows)} ({body_rows} holding a 2xx body); "
            f"second run made {second.calls_made} calls for {transient} transient rows"
        )
        print(
            f"{'':9s} billed attempts per answered call: first run {stats.as_dict()['billed_attempts_per_answer']}, "
            f"after both runs {billed_total / max(1, answered_total):.4f} "
            f"({billed_total} billed for {answered_total} answered)"
        )
        for name, ok in checks.items():
            print(f"{'':9s} [{'ok' if ok else 'FAIL'}] {name}")
        return all(checks.values())


def bench_requests(wire: str, calls: int) -> list[ChatRequest]:
    """One request per call: a seniority prompt for a provider, a fit item for the scorer."""
    if wire == "scorer":
        items = [
            {
                "id": f"r{i}",
                "task": "fit",
                "resume": f"Résumé number {i}: Python, 5 years.",
                "job_description": "Python",
            }
            for i in range(calls)
        ]
        return http_requests(items, 1)
    return [ChatRequest.from_prompt(f"Classify résumé number {i}.") for i in range(calls)]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wire", default="openai", choices=["openai", "anthropic", "gemini", "scorer", "all"])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--storm-rate", type=float, default=0.1, help="share of requests that time out in the storm")
    parser.add_argument("--storm-only", action="store_true")
    parser.add_argument("--hostile-only", action="store_true", help="only the faults with hostile answers")
    args = parser.parse_args()
    wires = ["openai", "anthropic", "gemini", "scorer"] if args.wire == "all" else [args.wire]
    ok = []
    for wire in wires:
        if not args.storm_only:
            ok.append(
                bench(
                    wire,
                    args.calls,
                    args.rate,
                    faults=FAULTS + "," + ",".join(HOSTILE_KINDS),
                    label="faults and hostile answers",
                )
            )
        if args.hostile_only:
            continue
        if not args.storm_only:
            ok.append(bench(wire, args.calls, args.rate))
        for retry in (False, True):
            ok.append(
                bench(
                    wire,
                    args.calls,
                    args.storm_rate,
                    faults="timeout",
                    retry_timeouts=retry,
                    label="timeout storm: 10% of requests time out",
                )
            )
        for retry in (False, True):
            ok.append(
                bench(
                    wire,
                    args.calls,
                    0.0,
                    faults="timeout",
                    retry_timeouts=retry,
                    stall_share=args.storm_rate,
                    label="stalled prompts: 10% of prompts time out on every attempt",
                )
            )
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
