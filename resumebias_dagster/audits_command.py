"""``resumebias audits``: the audit snapshots of a data directory (``audit_history.duckdb``,
core/history/store.py), oldest first, each with its tool version and verdict counts. Imports
what it needs when it runs, as every command does."""

from __future__ import annotations

import argparse


def audits_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="the data directory (default: $RESUMEBIAS_DATA_DIR or ./data)")
    parser.add_argument("--model", help="only this model's snapshots")
    parser.add_argument("--json", action="store_true", help="print JSON: one object per snapshot")


def audits_handler(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from resumebias_dagster.core.history.store import SnapshotStore
    from resumebias_dagster.settings import data_dir

    folder = Path(args.data_dir) if args.data_dir else data_dir()
    path = folder / "audit_history.duckdb"
    rows = SnapshotStore(path).snapshots(args.model)
    if args.json:
        print(json.dumps(rows.to_dict("records"), indent=2, default=str))
        return 0
    print(f"{len(rows)} audit snapshot(s) in {path}" + ("" if path.exists() else " (no audit kept yet)"))
    for r in rows.to_dict("records"):
        version = f"  version {r['tool_version']}" if r["tool_version"] else ""
        print(
            f"{str(r['created_at'])[:19]}  {r['snapshot_id']}  {r['n_findings']} findings, "
            f"{r['n_beyond_noise']} beyond noise{version}"
        )
    return 0
