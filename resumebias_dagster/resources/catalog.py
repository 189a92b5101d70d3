import dagster as dg
from pydantic import Field

from resumebias_dagster.catalog import CATALOG_DIR_ENV


class CatalogResource(dg.ConfigurableResource):
    """Where configuration data (name pools, lexicons, occupations, ...) is read from.

    Files in ``catalog_dir`` override the packaged files of the same name.
    """

    catalog_dir: str = Field(
        default="",
        description=f"folder whose files override the packaged catalog; empty = ${CATALOG_DIR_ENV} or packaged only",
    )

    def folder(self) -> str | None:
        return self.catalog_dir or None
