"""``resumebias audits``: the audit snapshots of a data directory (``audit_history.duckdb``,
core/history/store.py) or of the shared tables (``--tables-url``), oldest first, each with its
tool version and verdict counts; ``--compare EARLIER LATER``: what changed between any two
snapshots (core/history/changes.py, as the ``audit_changes`` asset compares them). Imports what
it needs when it runs, as every command does."""

from __future__ import annotations

import argparse


def audits_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="the data directory (default: $RESUMEBIAS_DATA_DIR or ./data)")
    parser.add_argument(
        "--tables-url",
        help="the shared tables' URL, s3://BUCKET/PREFIX or file:///FOLDER (default: $RESUMEBIAS_TABLES_URL; "
        "unset: the data directory's audit_history.duckdb)",
    )
    parser.add_argument("--model", help="only this model's snapshots")
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("EARLIER", "LATER"),
        help="what changed from snapshot EARLIER to snapshot LATER (of one model, or a model and the one it "
        "replaces): each finding's change with its 95%% interval and verdict",
    )
    parser.add_argument("--json", action="store_true", help="print JSON: one object per snapshot (or change)")


def audits_handler(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from resumebias_dagster.cli_support import EXIT_INPUT_ERROR
    from resumebias_dagster.core.common.shared_tables import SharedTablesError, unreadable
    from resumebias_dagster.core.history.store import SharedSnapshotStore, SnapshotStore
    from resumebias_dagster.settings import TABLES_URL_ENV, data_dir, tables_url

    url = args.tables_url or (None if args.data_dir else tables_url())
    setting = "--tables-url" if args.tables_url else TABLES_URL_ENV
    try:
        if url:
            store: SnapshotStore | SharedSnapshotStore = SharedSnapshotStore(url, setting)
        else:
            store = SnapshotStore((Path(args.data_dir) if args.data_dir else data_dir()) / "audit_history.duckdb")
        if args.compare:
            return _compare(store, *args.compare, as_json=args.json)
        rows = store.snapshots(args.model)
        kept = store.exists()
    except KeyError as exc:  # an unknown snapshot, named with the store
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except SharedTablesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except OSError as exc:
        print(f"error: {unreadable(setting, url or '', exc)}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    if args.json:
        print(json.dumps(rows.to_dict("records"), indent=2, default=str))
        return 0
    print(f"{len(rows)} audit snapshot(s) in {store.where}" + ("" if kept else " (no audit kept yet)"))
    for r in rows.to_dict("records"):
        version = f"  version {r['tool_version']}" if r["tool_version"] else ""
        print(
            f"{str(r['created_at'])[:19]}  {r['snapshot_id']}  {r['n_findings']} findings, "
            f"{r['n_beyond_noise']} beyond noise{version}"
        )
    return 0


def _compare(store, earlier: str, later: str, *, as_json: bool) -> int:
    """Print the changes from snapshot ``earlier`` to ``later`` (the verdict table, or JSON)."""
    import json
    import sys

    from resumebias_dagster.core.history.changes import snapshot_changes
    from resumebias_dagster.core.inference import load_inference_settings, verdict_records
    from resumebias_dagster.core.inference.verdict_table import format_verdict_table

    changes = snapshot_changes(store, earlier, later, load_inference_settings())
    if as_json:
        print(json.dumps(verdict_records(changes), indent=2, default=str))
        return 0
    changed = int((changes["verdict"] == "beyond_noise").sum())
    unchanged = int((changes["verdict"] == "equivalent").sum())
    sys.stdout.write(
        f"{later} against {earlier}: {len(changes)} findings compared, {changed} changed beyond noise, "
        f"{unchanged} unchanged within their margin, {len(changes) - changed - unchanged} not decided\n"
        "estimate: the later minus the earlier (impact ratios: the later over the earlier)\n"
        + format_verdict_table(changes, "(no finding both audits have)")
    )
    return 0
