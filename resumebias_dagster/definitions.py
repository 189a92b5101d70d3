"""The one Definitions object of the project. Importing it loads no model and no torch."""

import warnings

import dagster as dg

with warnings.catch_warnings():
    # dagster-pandera marks its converter beta; the schemas module uses it on purpose.
    warnings.simplefilter("ignore", dg.BetaWarning)
    from resumebias_dagster.assets import (
        audit,
        fairness,
        fit,
        metrics,
        predictions,
        reports,
        resumes,
        training,
        variants,
    )

from resumebias_dagster.automation import model_alias_sensor, weekly_fit_reaudit, weekly_seniority_reaudit
from resumebias_dagster.jobs import ALL_JOBS
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.storage import default_io_manager

_modules = [resumes, variants, training, predictions, metrics, fit, audit, reports, fairness]

defs = dg.Definitions(
    assets=dg.load_assets_from_modules(_modules),
    asset_checks=dg.load_asset_checks_from_modules(_modules),
    jobs=ALL_JOBS,
    sensors=[model_alias_sensor],
    schedules=[weekly_seniority_reaudit, weekly_fit_reaudit],
    resources={
        "io_manager": default_io_manager(),
        "catalog": CatalogResource(),
        "compute": ComputeResource(),
        "providers": ProvidersResource(),
    },
)
