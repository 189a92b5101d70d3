"""``python -m resumebias_dagster.testing.fake_providers --wire openai ...``: one server in its own process."""

from __future__ import annotations

import argparse
import asyncio
import signal
from pathlib import Path

from resumebias_dagster.testing.fake_providers.replies import WIRES, FaultProfile
from resumebias_dagster.testing.fake_providers.server import _DOC, FakeProviderServer


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=_DOC.split("\n\n")[0])
    parser.add_argument("--wire", choices=WIRES, default="openai")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", type=Path, help="write the port here once listening")
    parser.add_argument("--latency-s", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument(
        "--faults",
        default="rate_limited,server_error,unavailable,reset",
        help="comma-separated: rate_limited, server_error, unavailable, reset, timeout, and the "
        "hostile 2xx answers lone_surrogate, list_content, deep_nesting, invalid_utf8",
    )
    parser.add_argument("--retry-after-s", type=float, default=0.01)
    parser.add_argument("--timeout-delay-s", type=float, default=1.0, help="how long a 'timeout' fault stalls")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--model-version",
        help="the scorer wire: the version it reports (header X-Model-Version, model_version, GET /version)",
    )
    parser.add_argument(
        "--stall-share", type=float, default=0.0, help="share of prompts that stall --timeout-delay-s on every attempt"
    )
    args = parser.parse_args(argv)
    faults = None
    if args.fault_rate > 0:
        faults = FaultProfile(
            args.fault_rate, tuple(args.faults.split(",")), args.retry_after_s, args.timeout_delay_s, seed=args.seed
        )
    server = FakeProviderServer(
        args.wire,
        latency_s=args.latency_s,
        faults=faults,
        record=False,
        port=args.port,
        stall_share=args.stall_share,
        stall_delay_s=args.timeout_delay_s,
        resolved_model=args.model_version,
    )

    async def run() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(server.serve_forever())
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        while server.port == 0:
            await asyncio.sleep(0.01)
        if args.port_file:
            tmp = args.port_file.with_suffix(".tmp")
            tmp.write_text(str(server.port))
            tmp.replace(args.port_file)
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(run())
