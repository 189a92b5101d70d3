"""Ticking a sensor in a test: its run requests, and the warnings its logger wrote."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import dagster as dg


class LogRecords(logging.Handler):
    """Every record a logger it is added to writes (the sensor's logger does not reach the root)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def warnings(self) -> list[str]:
        return [r.getMessage() for r in self.records if r.levelno == logging.WARNING]


def tick(sensor, providers, cursor, log: LogRecords | None = None):
    """One evaluation of ``sensor`` with the ``providers`` resource, from ``cursor``."""
    with dg.build_sensor_context(cursor=cursor, resources={"providers": providers}) as context:
        if log is not None:
            context.log.addHandler(log)
        return sensor(context)


def requested(result) -> list[tuple[str, str]]:
    """(job, partition) of each run request of a tick, sorted."""
    return sorted((r.job_name, str(r.partition_key)) for r in result.run_requests)


def all_partitions(model: str, jds: Iterable[str]) -> list[tuple[str, str]]:
    """Every partition a model's re-audit runs: its predictions and its fit scores per JD."""
    return sorted([("seniority_predictions_job", model)] + [("fit_scores_job", f"{jd}|{model}") for jd in jds])
