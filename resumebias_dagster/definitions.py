"""The one Definitions object of the project: the assets under defs/ (one folder per domain,
loaded as ``dg.load_from_defs_folder`` does), each with its group, owner and column schema, merged
with the resources, jobs, sensor and schedules. Importing it loads no model and no torch,
opens no connection and creates no folder."""

import importlib
import warnings
from pathlib import Path

import dagster as dg

from resumebias_dagster.automation import (
    model_alias_sensor,
    weekly_fit_reaudit,
    weekly_rankings_reaudit,
    weekly_seniority_reaudit,
)
from resumebias_dagster.jobs import ALL_JOBS
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import default_io_manager
from resumebias_dagster.settings import check_dotenv

DEFS_PACKAGE = "resumebias_dagster.defs"
COLUMN_SCHEMA = "dagster/column_schema"


class DefsLayoutError(ValueError):
    """An asset outside a group folder of defs/, or a group folder that names no owner."""


def group_of(assets_def: dg.AssetsDefinition) -> str:
    """The folder of defs/ an asset's function lives in: the group a user sees in the UI."""
    fn = assets_def.op.compute_fn
    module = getattr(fn, "decorated_fn", fn).__module__
    parts = module.split(".")
    if module.startswith(DEFS_PACKAGE + ".") and len(parts) > 3:
        return parts[2]
    keys = ", ".join(k.to_user_string() for k in assets_def.keys)
    raise DefsLayoutError(f"{module}: assets {keys} must live in a group folder of resumebias_dagster/defs/")


def owner_of(group: str) -> str:
    """The owner a group's folder names (``OWNER`` in its ``__init__.py``)."""
    owner = getattr(importlib.import_module(f"{DEFS_PACKAGE}.{group}"), "OWNER", None)
    if not isinstance(owner, str) or not owner.startswith("team:"):
        raise DefsLayoutError(
            f"resumebias_dagster/defs/{group}/__init__.py: set OWNER = 'team:<name>' (every asset has an owner)"
        )
    return owner


def column_schema(assets_def: dg.AssetsDefinition, key: dg.AssetKey) -> dg.TableSchema | None:
    """The columns of an asset's table, as its Dagster type carries them: dagster-pandera builds
    that type and this schema from the table's one pandera model in core/tables/ (schemas.py)."""
    output = assets_def.op.output_def_named(assets_def.get_output_name_for_asset_key(key))
    schema = output.dagster_type.metadata.get("schema")
    return schema.schema if isinstance(schema, dg.TableSchemaMetadataValue) else None


def describe_assets(found: dg.Definitions) -> dg.Definitions:
    """``found`` with each asset's group (its folder), owner (its folder's, unless the asset
    names its own) and column schema (from its pandera model) set."""
    described: dict[dg.AssetKey, tuple[str, str, dg.TableSchema | None]] = {}
    for assets_def in found.assets or []:
        if not isinstance(assets_def, dg.AssetsDefinition):
            raise DefsLayoutError(f"resumebias_dagster/defs/: {assets_def!r} is not an asset definition")
        group = group_of(assets_def)
        for key in assets_def.keys:
            described[key] = (group, owner_of(group), column_schema(assets_def, key))

    def describe(spec: dg.AssetSpec) -> dg.AssetSpec:
        group, owner, schema = described[spec.key]
        metadata = dict(spec.metadata)
        if schema is not None:
            metadata[COLUMN_SCHEMA] = dg.MetadataValue.table_schema(schema)
        return spec.replace_attributes(group_name=group, owners=spec.owners or [owner], metadata=metadata)

    with warnings.catch_warnings():
        # Marked preview in dagster 1.13; it keeps every other definition the folder loaded.
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return found.map_asset_specs(func=describe)


def load_defs_folder() -> dg.Definitions:
    """The assets and checks of defs/, loaded as ``dg.load_from_defs_folder`` loads them, but
    from the package itself: an installed package has no pyproject.toml above it to find
    defs/ through (``dg`` in a source checkout reads the same folder from ``[tool.dg]``)."""
    import resumebias_dagster.defs as defs_root

    with warnings.catch_warnings():
        # dagster-pandera marks its converter beta; the schemas module uses it on purpose.
        warnings.simplefilter("ignore", dg.BetaWarning)
        return dg.load_defs(defs_root=defs_root, project_root=Path(defs_root.__file__).parent.parent)


# A data folder or instance named by the working folder's .env (which Dagster's CLI loads) that
# resumebias did not create is refused before the definitions exist (issue 40).
check_dotenv()

defs = dg.Definitions.merge(
    describe_assets(load_defs_folder()),
    dg.Definitions(
        jobs=ALL_JOBS,
        sensors=[model_alias_sensor],
        schedules=[weekly_seniority_reaudit, weekly_fit_reaudit, weekly_rankings_reaudit],
        resources={
            "io_manager": default_io_manager(),
            "catalog": CatalogResource(),
            "compute": ComputeResource(),
            "providers": ProvidersResource(),
            "shared_files": SharedFilesResource(),
        },
    ),
)
