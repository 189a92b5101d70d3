"""The files several machines share: the resource that owns ``SharedFiles`` for the assets."""

from __future__ import annotations

import dagster as dg

from resumebias_dagster.core.common.shared_files import SharedFiles
from resumebias_dagster.settings import tables_url


class SharedFilesResource(dg.ConfigurableResource):
    """Classifier folders by content hash, plots and reports, under ``$RESUMEBIAS_TABLES_URL/files``.

    The URL is the deployment's (the environment of every worker), never run config: a URL
    chosen in the UI could send the files anywhere. Unset: one machine, nothing is shared."""

    def files(self) -> SharedFiles | None:
        url = tables_url()
        return SharedFiles(url) if url else None
