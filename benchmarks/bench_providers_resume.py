"""Resume: kill a Dagster materialisation of provider predictions at ~50% with SIGKILL,
materialise again, and count the second run's calls: they must be exactly the missing ones.

The asset is the seniority task through ``ProvidersResource`` (the study's default design,
5 runs per cell) against a loopback OpenAI-compatible server answering in 50 ms. "Missing"
is the calls minus the rows the store held after the kill (calls in flight at the kill were
made but never stored, so they are missing too).

Run: python benchmarks/bench_providers_resume.py [--n-per-level 20]
"""

import argparse
import functools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
import yaml
from _provider_bench import bench_environ, fake_server, model_entry, server_stats

from resumebias_dagster.core.common.prompts import SENIORITY_PROMPT, load_prompt
from resumebias_dagster.core.estimate import design_variants
from resumebias_dagster.core.seniority.task import predict_with_provider
from resumebias_dagster.resources.providers import ProvidersResource, stats_metadata

MODEL = "bench-openai"


def child(models_file: str, store_path: str, n_per_level: int) -> None:
    variants = design_variants(n_per_level)

    @dg.asset
    def provider_seniority_predictions(context: dg.AssetExecutionContext, providers: ProvidersResource) -> None:
        run = functools.partial(providers.run, MODEL)
        template = load_prompt(SENIORITY_PROMPT)
        df, stats = predict_with_provider(run, variants, providers.settings(MODEL), template)
        context.add_output_metadata(stats_metadata(stats))
        print("STATS " + json.dumps(stats.as_dict()), flush=True)

    resource = ProvidersResource(models_file=models_file, store_path=store_path)
    dg.materialize([provider_seniority_predictions], resources={"providers": resource})


def stored_rows(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-per-level", type=int, default=20)
    parser.add_argument("--runs-per-cell", type=int, default=5)
    parser.add_argument("--child", nargs=3, metavar=("MODELS", "STORE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    total = len(design_variants(args.n_per_level)) * args.runs_per_cell
    with fake_server("openai", "--latency-s", "0.05") as base_url, tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        entry = {
            **model_entry("openai", base_url, max_concurrency=16, timeout_s=30),
            "name": MODEL,
            "runs_per_cell": args.runs_per_cell,
        }
        (tmp / "models.yaml").write_text(yaml.safe_dump({"models": [entry]}))
        store = tmp / "responses.sqlite"
        # The models file and the store lie under the data directory, where run config may name files.
        env = {**bench_environ(), "DAGSTER_HOME": str(tmp / "dagster_home"), "RESUMEBIAS_DATA_DIR": str(tmp)}
        (tmp / "dagster_home").mkdir()
        command = [sys.executable, __file__, "--child", str(tmp / "models.yaml"), str(store), str(args.n_per_level)]
        first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        started = time.monotonic()
        while stored_rows(store) < total // 2:
            if first.poll() is not None:
                print("the first materialisation ended before half way; use a larger --n-per-level")
                return 1
            time.sleep(0.01)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        kill_s = time.monotonic() - started
        kept = stored_rows(store)
        calls_before = server_stats(base_url)["requests"]
        second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        lines = [line for line in second.stdout.splitlines() if line.startswith("STATS ")]
        if second.returncode != 0 or not lines:
            print(second.stderr[-3000:])
            return 1
        stats = json.loads(lines[-1][len("STATS ") :])
        server_calls = server_stats(base_url)["requests"] - calls_before
        missing = total - kept
        print(
            f"calls in the design: {total}; first materialisation killed (SIGKILL) after {kill_s:.1f}s with "
            f"{kept} responses stored ({kept / total:.0%}), {calls_before} calls made "
            f"({calls_before - kept} in flight, lost)"
        )
        print(
            f"second materialisation: {stats['calls_made']} calls made, {stats['served_from_store']} served "
            f"from the store; missing before it: {missing}; server saw {server_calls} requests"
        )
        ok = stats["calls_made"] == missing == server_calls and stats["served_from_store"] == kept
        print(f"[{'ok' if ok else 'FAIL'}] second run's calls == missing calls == requests at the server")
        with sqlite3.connect(store, timeout=5) as db:
            claims = db.execute("SELECT COUNT(*) FROM claims").fetchone()[0]
        print(
            f"[{'ok' if claims == 0 else 'FAIL'}] no claim left in the store ({claims}); the killed run's "
            "claims were taken over at once (its process is gone)"
        )
        return 0 if ok and claims == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
