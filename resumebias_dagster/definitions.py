"""The one Definitions object of the project. Importing it loads no model and no torch."""

import warnings

import dagster as dg

with warnings.catch_warnings():
    # dagster-pandera marks its converter beta; the schemas module uses it on purpose.
    warnings.simplefilter("ignore", dg.BetaWarning)
    from resumebias_dagster.assets import jd_audit, ranking, report, seniority_models, seniority_study, user_resumes

    # One package per asset group: the folder names the group a user sees in the UI. Loading
    # imports the asset modules, hence inside the warnings block.
    _groups = [seniority_study, seniority_models, jd_audit, ranking, user_resumes, report]
    _assets = [
        a for g in _groups for a in dg.load_assets_from_package_module(g, group_name=g.__name__.rsplit(".", 1)[-1])
    ]
    _checks = [c for g in _groups for c in dg.load_asset_checks_from_package_module(g)]

from resumebias_dagster.automation import (
    model_alias_sensor,
    weekly_fit_reaudit,
    weekly_seniority_reaudit,
)
from resumebias_dagster.jobs import ALL_JOBS
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import default_io_manager
from resumebias_dagster.settings import check_dotenv

# A data folder or instance named by the working folder's .env (which Dagster's CLI loads) that
# resumebias did not create is refused before the definitions exist (issue 40).
check_dotenv()

defs = dg.Definitions(
    assets=_assets,
    asset_checks=_checks,
    jobs=ALL_JOBS,
    sensors=[model_alias_sensor],
    schedules=[weekly_seniority_reaudit, weekly_fit_reaudit],
    resources={
        "io_manager": default_io_manager(),
        "catalog": CatalogResource(),
        "compute": ComputeResource(),
        "providers": ProvidersResource(),
        "shared_files": SharedFilesResource(),
    },
)
