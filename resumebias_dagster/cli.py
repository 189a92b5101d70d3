"""Command line: ``resumebias SUBCOMMAND ...``.

Each subcommand is a ``Command`` in ``COMMANDS``: a function adding its
arguments and a handler returning the exit status. Handlers import what they
need themselves, so ``resumebias analyze`` never loads Dagster or torch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from resumebias_dagster.audits_command import audits_arguments, audits_handler
from resumebias_dagster.cli_support import EXIT_INPUT_ERROR, InputError, fail, positive_int
from resumebias_dagster.plan_command import plan_arguments, plan_handler

__all__ = ["COMMANDS", "EXIT_INPUT_ERROR", "Command", "InputError", "build_parser", "fail", "main"]


@dataclass(frozen=True)
class Command:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]


def _analyze_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="prediction CSV in the seniority study's style or social format"
    )
    parser.add_argument("--json", action="store_true", help="print the analysis as JSON instead of tables")


def _analyze(args: argparse.Namespace) -> int:
    from resumebias_dagster.catalog import CatalogError
    from resumebias_dagster.core.inference import load_inference_settings, verdict_records
    from resumebias_dagster.core.seniority.metrics import analysis_json
    from resumebias_dagster.core.seniority.prediction_import import PredictionFileError, read_prediction_files
    from resumebias_dagster.core.seniority.tables_text import format_tables
    from resumebias_dagster.core.seniority.verdicts import seniority_verdicts

    try:
        predictions = read_prediction_files(args.paths)
        settings = load_inference_settings()
    except (PredictionFileError, CatalogError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    verdicts = seniority_verdicts(predictions, settings)
    if args.json:
        import json

        print(json.dumps({**analysis_json(predictions), "verdicts": verdict_records(verdicts)}, indent=2))
    else:
        sys.stdout.write(format_tables(predictions, verdicts))
    return 0


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    """Settings come from the environment, or from an audit file (``audit_file.py``)."""
    parser.add_argument("--config", metavar="FILE", help="an audit file: models_file, catalog_dir, assets' settings")


def _run(args: argparse.Namespace) -> int:
    from resumebias_dagster.runner import run_study

    return run_study(audit_path=args.config)


def _estimate_cost_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--models-file", help="models config (default: $RESUMEBIAS_MODELS_FILE or the packaged one)")
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME",
        help="only this provider model (repeatable); disabled models may be named",
    )
    parser.add_argument("--all", action="store_true", help="every provider model of the config, disabled ones too")
    parser.add_argument(
        "--task",
        action="append",
        default=[],
        choices=["seniority", "fit", "ranking", "judge", "generation"],
        help="only this task (repeatable; default: every task the design calls)",
    )
    parser.add_argument(
        "--n-per-level", type=positive_int, default=40, help="base résumés per seniority level (asset default 40)"
    )
    parser.add_argument("--seed", type=int, default=0, help="generator, rewriter and name seed (asset default 0)")
    parser.add_argument(
        "--generator-model",
        metavar="NAME",
        help="provider model writing the base résumés (base_resumes' generator_model; default: none)",
    )
    parser.add_argument(
        "--rewriter-model",
        metavar="NAME",
        help="provider model rewriting the styles (style_variants' rewriter_model; default: none)",
    )
    parser.add_argument(
        "--store",
        help="response store: a file or a postgresql:// URL (default: $RESUMEBIAS_STORE_URL, "
        "else <data dir>/responses.sqlite); read, never created",
    )
    parser.add_argument("--catalog-dir", help="folder overriding packaged catalog files (prices.yaml, prompts, JDs)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _estimate_cost(args: argparse.Namespace) -> int:
    from resumebias_dagster.catalog import CatalogError
    from resumebias_dagster.core.estimate import estimate_cost, study_design
    from resumebias_dagster.core.models.model_config import ModelConfigError
    from resumebias_dagster.core.providers import ProviderConfigError
    from resumebias_dagster.cost_table import cost_json, print_cost_table

    try:
        models, judges, writers = _cost_models(args)
    except (ModelConfigError, ProviderConfigError, CatalogError) as exc:
        return fail(str(exc))
    if not models and not writers:
        print("no provider model is enabled; name one with --model or use --all", file=sys.stderr)
        return EXIT_INPUT_ERROR
    try:
        store, path = _read_only_store(args.store)
    except InputError as exc:
        return fail(str(exc))
    try:
        try:
            design = study_design(args.n_per_level, args.seed, args.catalog_dir)
        except ValueError as exc:
            if isinstance(exc, CatalogError):
                raise
            return fail(f"--n-per-level {args.n_per_level}: {exc}")
        table = estimate_cost(
            models,
            design,
            store,
            judges=judges,
            generator=writers.get("--generator-model"),
            rewriter=writers.get("--rewriter-model"),
            tasks=args.task or ("seniority", "fit", "ranking", "judge", "generation"),
            catalog_dir=args.catalog_dir,
        )
    except CatalogError as exc:
        return fail(str(exc))
    finally:
        if store is not None:
            store.close()
    if args.json:
        print(cost_json(table, design, path if store else None))
        return 0
    print_cost_table(table, design, args.n_per_level, path if store is None else None)
    return 0


def _cost_models(args: argparse.Namespace):
    """The provider models, judges and writers (by flag) whose calls ``estimate-cost`` prices."""
    from resumebias_dagster.core.models.model_config import ModelConfigError, load_judges, load_models
    from resumebias_dagster.core.providers import ProviderSettings

    every = load_models(args.models_file, args.catalog_dir, include_disabled=True)
    shown = every if (args.all or args.model) else [s for s in every if s.enabled]
    specs = [s for s in shown if s.kind in ("provider", "http") and (not args.model or s.name in args.model)]
    unknown = set(args.model) - {s.name for s in specs}
    if unknown:
        raise ModelConfigError(
            f"no provider model or scoring endpoint (kind http) named {', '.join(sorted(unknown))} in the models config"
        )
    models = [ProviderSettings.from_spec(s) for s in specs]
    judges = [ProviderSettings.from_spec(j) for j in load_judges(args.models_file, args.catalog_dir)]
    providers = {s.name: s for s in every if s.kind == "provider"}
    writers = {}
    for flag, name in (("--generator-model", args.generator_model), ("--rewriter-model", args.rewriter_model)):
        if name:
            if name not in providers:
                raise ModelConfigError(f"{flag}: no provider model named {name!r} in the models config")
            writers[flag] = ProviderSettings.from_spec(providers[name])
    return models, judges, writers


def _read_only_store(option: str | None):
    """The response store ``--store`` names (else the default one) opened read-only, or None
    where none exists yet; and where it is, for the output (a URL without its password)."""
    from pathlib import Path

    from resumebias_dagster.core.providers import ResponseStore
    from resumebias_dagster.core.providers.store import STORE_URL_ENV, StoreError, is_store_url, store_target

    target = option or store_target(None)
    store = None
    try:
        if is_store_url(target):
            store = ResponseStore(target, read_only=True, setting="--store" if option else STORE_URL_ENV)
        elif Path(target).exists():
            store = ResponseStore(Path(target), read_only=True)
        elif option:
            raise InputError(f"--store: no response store at {target}")
    except StoreError as exc:
        raise InputError(str(exc)) from None
    return store, (store.location if store is not None else str(target))


def _analyze_fit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path", metavar="PATH", help="long CSV or Parquet of fit-score runs (variant, model, jd, run, score)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON: {cells: [one object per cell], verdicts: [one object per finding]}",
    )
    parser.add_argument("--all", action="store_true", help="list every cell, not only those beyond noise")


def _analyze_fit(args: argparse.Namespace) -> int:
    from resumebias_dagster.catalog import CatalogError
    from resumebias_dagster.core.inference import verdict_records
    from resumebias_dagster.core.jd_audit.fit_import import (
        FitScoreFileError,
        analyze_fit_file,
        effects_json,
        format_fit_report,
    )

    try:
        effects, verdicts = analyze_fit_file(args.path)
    except (FitScoreFileError, CatalogError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    if args.json:
        import json

        print(json.dumps({"cells": effects_json(effects), "verdicts": verdict_records(verdicts)}, indent=2))
    else:
        sys.stdout.write(format_fit_report(effects, all_cells=args.all, verdicts=verdicts))
    return 0


def _analyze_validity_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        metavar="FILE",
        help="CSV of scored validity pairs (resume_id, group, role, score; docs/howto/analyze.md)",
    )
    parser.add_argument(
        "--reference", metavar="GROUP", help="the name group the others are contrasted with (default: the file's first)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON: {summary: {model: word}, verdicts: [...]}")


def _analyze_validity(args: argparse.Namespace) -> int:
    from resumebias_dagster.catalog import CatalogError
    from resumebias_dagster.core.inference import verdict_records
    from resumebias_dagster.core.jd_audit.validity_import import ValidityFileError, analyze_validity_file
    from resumebias_dagster.core.jd_audit.validity_stats import validity_summary

    try:
        verdicts = analyze_validity_file(args.path, reference=args.reference)
    except (ValidityFileError, CatalogError) as exc:
        return fail(str(exc))
    summary = validity_summary(verdicts)
    if args.json:
        import json

        print(json.dumps({"summary": summary, "verdicts": verdict_records(verdicts)}, indent=2))
        return 0
    from resumebias_dagster.core.inference.verdict_table import format_verdict_table

    words = [f"{model}: {word}" for model, word in summary.items()]
    none = "(no criterion validity: the file has no better or worse twin with a score)"
    lines = ["DOES IT MEASURE QUALIFICATION?", *(words or [none]), ""]
    sys.stdout.write("\n".join(lines) + "\n" + format_verdict_table(verdicts))
    return 0


def _rank_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE", help="JSON Lines: job, model, shown, groups, answer")
    parser.add_argument("--top-k", type=positive_int, default=3, metavar="K", help="top-k places (default 3)")
    parser.add_argument("--json", action="store_true", help="print JSON: {groups, positions, answers, verdicts}")


def _rank(args: argparse.Namespace) -> int:
    from resumebias_dagster.catalog import CatalogError
    from resumebias_dagster.core.inference import load_inference_settings
    from resumebias_dagster.core.ranking.rank_import import RankingFileError, rank_report, read_ranking_files
    from resumebias_dagster.core.ranking.verdicts import ranking_verdicts

    try:
        rows = read_ranking_files(args.paths)
        settings = load_inference_settings()
    except (RankingFileError, CatalogError) as exc:
        return fail(str(exc))
    verdicts = ranking_verdicts(rows, settings)
    sys.stdout.write(rank_report(rows, args.top_k, as_json=args.json, verdicts=verdicts))
    return 0


def _pull_tables_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", help="shared tables: s3://BUCKET/PREFIX or file:///FOLDER (default: $RESUMEBIAS_TABLES_URL)"
    )
    parser.add_argument(
        "--out", help="DuckDB file written (default: <data dir>/shared-tables.duckdb); replaced table by table"
    )


def _pull_tables(args: argparse.Namespace) -> int:

    from resumebias_dagster.core.common.shared_tables import (
        SCHEMA,
        SharedTables,
        SharedTablesError,
        pull_into_duckdb,
        unreadable,
        write_into_duckdb,
    )
    from resumebias_dagster.core.history.store import SCHEMA as HISTORY_SCHEMA
    from resumebias_dagster.core.history.store import SharedSnapshotStore
    from resumebias_dagster.settings import TABLES_URL_ENV, data_dir, tables_url

    url = args.url or tables_url()
    if not url:
        print(f"error: no shared tables to pull: give --url or set {TABLES_URL_ENV}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    setting = "--url" if args.url else TABLES_URL_ENV
    out = args.out or str(data_dir() / "shared-tables.duckdb")
    try:
        shared = SharedTables(url, setting=setting)
        counts, skipped = pull_into_duckdb(shared, SCHEMA, out, tables=_asset_names())
        counts = {f"{SCHEMA}.{t}": n for t, n in counts.items()}
        # The audit snapshots beside them (history/), as listed: none of a write that stopped.
        snapshots = SharedSnapshotStore(url, setting).listed_tables()
        if snapshots:
            pulled = write_into_duckdb(snapshots, HISTORY_SCHEMA, out)
            counts.update({f"{HISTORY_SCHEMA}.{t}": n for t, n in pulled.items()})
    except SharedTablesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except OSError as exc:
        print(f"error: {unreadable(setting, url, exc)}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    if skipped:
        shown = ", ".join(repr(t) for t in skipped[:5]) + (" ..." if len(skipped) > 5 else "")
        print(f"warning: skipped {len(skipped)} folders that are no table of this project: {shown}", file=sys.stderr)
    if not counts:
        print(f"error: no tables under {SCHEMA}/ at that URL", file=sys.stderr)
        return EXIT_INPUT_ERROR
    for table, rows in counts.items():
        print(f"{table}: {rows:,} rows")
    print(f'wrote {out}; e.g. duckdb {out} "select * from {next(iter(counts))} limit 5"')
    return 0


def _batches_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", help="response store: a file or a postgresql:// URL (default: the run's store)")
    parser.add_argument("--model", help="only this model's batches")
    parser.add_argument("--json", action="store_true", help="print JSON: one object per batch")


def _batches(args: argparse.Namespace) -> int:
    import json

    try:
        store, where = _read_only_store(args.store)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    try:
        rows = store.batches(args.model) if store is not None else []
    except Exception:  # noqa: BLE001 - a store of a version before batch mode, read-only: none
        rows = []
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{len(rows)} batch(es) in {where}")
    for r in rows:
        counts = f"{r['succeeded'] or 0:,} answered, {r['errored'] or 0:,} failed of {r['requests']:,}"
        provider = f" ({r['provider_state']})" if r["provider_state"] else ""
        why = f"  ({r['message']})" if r.get("message") else ""
        print(
            f"{r['created_at'][:19]}  {r['model']}  {r['batch_id'] or r['submission_id']}  {r['state']}{provider}  "
            f"{counts}{why}"
        )
    return 0


def _asset_names() -> set[str]:
    """The tables this project writes: its assets' names (pull-tables pulls no other folder)."""
    from resumebias_dagster.definitions import defs

    return {key.path[-1] for key in defs.resolve_asset_graph().get_all_asset_keys()}


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    from resumebias_dagster.demo.command import demo_arguments

    demo_arguments(parser)


def _demo(args: argparse.Namespace) -> int:
    from resumebias_dagster.demo.command import demo_handler

    return demo_handler(args)


COMMANDS: dict[str, Command] = {
    "demo": Command(
        "a first audit in about two minutes: a sample screener on sample résumés, ending with its report",
        _demo_arguments,
        _demo,
    ),
    "run": Command(
        "materialise the whole study on the embedded defaults and print where the results are",
        _run_arguments,
        _run,
    ),
    "analyze": Command(
        "notebook 001 metrics (accuracy, rank difference, inconsistency, bias indicators) of prediction CSVs",
        _analyze_arguments,
        _analyze,
    ),
    "analyze-fit": Command(
        "study 003 fit-score effects and verdicts (the résumé the unit, adjusted p, equivalence) of existing runs",
        _analyze_fit_arguments,
        _analyze_fit,
    ),
    "analyze-rank": Command("share ranked first and impact ratios of rankings made elsewhere", _rank_arguments, _rank),
    "analyze-validity": Command(
        "criterion validity (is the better twin scored higher?) and its gaps between name groups, of pairs scored "
        "elsewhere",
        _analyze_validity_arguments,
        _analyze_validity,
    ),
    "plan": Command(
        "résumés, runs, job descriptions, calls and dollars a study needs to detect an effect with 80% power",
        plan_arguments,
        plan_handler,
    ),
    "estimate-cost": Command(
        "calls, expected tokens and dollars of the configured provider models for the study, and how many are stored",
        _estimate_cost_arguments,
        _estimate_cost,
    ),
    "batches": Command(
        "the provider batches of the response store: model, batch id, state, answered and failed requests",
        _batches_arguments,
        _batches,
    ),
    "audits": Command(
        "the audit snapshots kept in the data directory: each completed audit of a model, never overwritten",
        audits_arguments,
        audits_handler,
    ),
    "pull-tables": Command(
        "copy the shared tables of a multi-machine deployment (Parquet on S3) into a local DuckDB file to inspect",
        _pull_tables_arguments,
        _pull_tables,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="resumebias", description="Audit AI models for bias in résumé screening.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        # argparse formats a help string with %, not a description (plan --help printed "80%%").
        sub = subparsers.add_parser(name, help=command.help.replace("%", "%%"), description=command.help)
        command.add_arguments(sub)
        sub.set_defaults(handler=command.handler)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (the console script exits with it)."""
    from resumebias_dagster.settings import UntrustedFolderError

    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except UntrustedFolderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR


if __name__ == "__main__":
    sys.exit(main())
