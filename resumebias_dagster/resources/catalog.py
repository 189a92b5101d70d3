import dagster as dg
from pydantic import Field

from resumebias_dagster.catalog import CATALOG_DIR_ENV, PRESET_PREFIX, CatalogError, is_preset, preset_dir
from resumebias_dagster.settings import checked_path


class CatalogResource(dg.ConfigurableResource):
    """Where configuration data (name pools, lexicons, occupations, ...) is read from.

    Files in ``catalog_dir`` override the packaged files of the same name; ``preset:NAME``
    names a packaged overlay (``preset:study003``: study 003's design).
    """

    catalog_dir: str = Field(
        default="",
        description=(
            f"folder whose files override the packaged catalog, or {PRESET_PREFIX}NAME for a packaged preset "
            f"({PRESET_PREFIX}study003); empty = ${CATALOG_DIR_ENV} or packaged only"
        ),
    )

    def folder(self) -> str | None:
        """The override folder; one named in run config must lie under the allowed folders. A
        preset is a packaged folder, not a path of the user's, so it is resolved, not checked."""
        if not self.catalog_dir:
            return None
        if is_preset(self.catalog_dir):
            try:
                return str(preset_dir(self.catalog_dir))
            except CatalogError as exc:
                raise CatalogError(f"catalog.catalog_dir: {exc}") from None
        return str(checked_path(self.catalog_dir, "catalog.catalog_dir"))
