"""The one Definitions object of the project. Importing it loads no model and no torch."""

import warnings

import dagster as dg

with warnings.catch_warnings():
    # dagster-pandera marks its converter beta; the schemas module uses it on purpose.
    warnings.simplefilter("ignore", dg.BetaWarning)
    from resumebias_dagster.assets import metrics, predictions, resumes, variants

from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.storage import default_io_manager

_modules = [resumes, variants, predictions, metrics]

seniority_study_job = dg.define_asset_job(
    "seniority_study",
    selection=dg.AssetSelection.groups("seniority_study"),
    description="The whole seniority study on the embedded defaults.",
)

defs = dg.Definitions(
    assets=dg.load_assets_from_modules(_modules),
    asset_checks=dg.load_asset_checks_from_modules(_modules),
    jobs=[seniority_study_job],
    resources={
        "io_manager": default_io_manager(),
        "catalog": CatalogResource(),
        "compute": ComputeResource(),
    },
)
