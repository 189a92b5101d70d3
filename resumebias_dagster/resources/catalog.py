import dagster as dg
from pydantic import Field

from resumebias_dagster.catalog import CATALOG_DIR_ENV
from resumebias_dagster.settings import checked_path


class CatalogResource(dg.ConfigurableResource):
    """Where configuration data (name pools, lexicons, occupations, ...) is read from.

    Files in ``catalog_dir`` override the packaged files of the same name.
    """

    catalog_dir: str = Field(
        default="",
        description=f"folder whose files override the packaged catalog; empty = ${CATALOG_DIR_ENV} or packaged only",
    )

    def folder(self) -> str | None:
        """The override folder; one named in run config must lie under the allowed folders."""
        if not self.catalog_dir:
            return None
        return str(checked_path(self.catalog_dir, "catalog.catalog_dir"))
