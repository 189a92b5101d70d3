"""The settings of a scorer of the user's that keep it from telling it is audited: its pacing
(the least seconds between two calls) and the seed of its calls' shuffled order."""

from __future__ import annotations

from resumebias_dagster.core.models.spec import ModelConfigError


def check_blind(entry, where: str) -> None:
    """``min_interval_s`` and ``order_seed`` of ``entry``, each optional."""
    interval = entry.get("min_interval_s")
    if "min_interval_s" in entry and (
        isinstance(interval, bool) or not isinstance(interval, (int, float)) or not interval > 0
    ):
        raise ModelConfigError(f"{where}: min_interval_s must be a number of seconds > 0, got {interval!r}")
    seed = entry.get("order_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ModelConfigError(f"{where}: order_seed must be a whole number >= 0, got {seed!r}")
