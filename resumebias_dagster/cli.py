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

EXIT_INPUT_ERROR = 2  # bad input file, same status argparse uses for bad arguments


@dataclass(frozen=True)
class Command:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]


def _analyze_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="prediction CSV in the seed's style or social format")
    parser.add_argument("--json", action="store_true", help="print the analysis as JSON instead of tables")


def _analyze(args: argparse.Namespace) -> int:
    from resumebias_dagster.core.importer import PredictionFileError, read_prediction_files
    from resumebias_dagster.core.metrics import analysis_json, format_report

    try:
        predictions = read_prediction_files(args.paths)
    except PredictionFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    if args.json:
        import json

        print(json.dumps(analysis_json(predictions), indent=2))
    else:
        sys.stdout.write(format_report(predictions))
    return 0


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    """The embedded defaults take no arguments; settings come from the environment."""


def _run(_: argparse.Namespace) -> int:
    from resumebias_dagster.runner import run_study

    return run_study()


COMMANDS: dict[str, Command] = {
    "run": Command(
        "materialise the whole study on the embedded defaults and print where the results are",
        _run_arguments,
        _run,
    ),
    "analyze": Command(
        "seed 001 metrics (accuracy, rank difference, inconsistency, bias indicators) of prediction CSVs",
        _analyze_arguments,
        _analyze,
    ),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="resumebias", description="Audit AI models for bias in résumé screening.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        sub = subparsers.add_parser(name, help=command.help, description=command.help)
        command.add_arguments(sub)
        sub.set_defaults(handler=command.handler)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (the console script exits with it)."""
    args = build_parser().parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
