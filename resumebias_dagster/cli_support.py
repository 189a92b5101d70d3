"""What every command of the command line shares: the input error, how it is reported, and the
argument types (a module of its own so the commands split over several modules share it)."""

from __future__ import annotations

import argparse
import sys

EXIT_INPUT_ERROR = 2  # bad input file, same status argparse uses for bad arguments


class InputError(ValueError):
    """Bad input a handler's step found; the handler reports it with ``fail``."""


def fail(message: str) -> int:
    """Say what is wrong with the input and give the input-error status."""
    print(f"error: {message}", file=sys.stderr)
    return EXIT_INPUT_ERROR


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
