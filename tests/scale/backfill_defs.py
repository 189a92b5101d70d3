"""Code location of the scale-out test: the JD audit's inputs, `fit_scores` over two provider
models x the 17 packaged job descriptions, and `fit_effects` reading every partition.

The code server and every worker import this file with the environment of their own
"machine": `RESUMEBIAS_SCALE_DIR` holds that machine's copy of the catalog folder (a
`models.yaml` pointing at the test's fake provider); the tables are shared through
`RESUMEBIAS_TABLES_URL` (Parquet on S3) and the answers through `RESUMEBIAS_STORE_URL`
(PostgreSQL), so nothing is shared on disk.
"""

import os
from pathlib import Path

import dagster as dg

from resumebias_dagster.core.jd_audit.job_descriptions import load_job_descriptions
from resumebias_dagster.defs.jd_audit import fit
from resumebias_dagster.defs.seniority_study import resumes
from resumebias_dagster.defs.user_resumes.files import user_resume_probes, user_resumes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.compute import ComputeResource
from resumebias_dagster.resources.providers import ProvidersResource
from resumebias_dagster.resources.shared_files import SharedFilesResource
from resumebias_dagster.resources.storage import default_io_manager

SCALE_DIR = Path(os.environ["RESUMEBIAS_SCALE_DIR"])
CATALOG_DIR = SCALE_DIR / "catalog"
MODELS = ["fake-a", "fake-b"]
JDS = load_job_descriptions()["jd"].tolist()

PARTITIONS = dg.MultiPartitionsDefinition(
    {"model": dg.StaticPartitionsDefinition(MODELS), "jd": dg.StaticPartitionsDefinition(JDS)}
)
FIT_SCORES = fit.build_fit_scores(PARTITIONS)
INPUTS = [resumes.base_resumes, user_resumes, user_resume_probes, fit.job_descriptions, fit.probe_variants]
INPUTS_CONFIG = {
    "ops": {
        "base_resumes": {"config": {"n_per_level": 3, "seed": 0}},
        "probe_variants": {"config": {"levels": ["senior"]}},
    }
}
RESOURCES = {
    "io_manager": default_io_manager(),
    "catalog": CatalogResource(catalog_dir=str(CATALOG_DIR)),
    "compute": ComputeResource(device="cpu"),
    "shared_files": SharedFilesResource(),
    "providers": ProvidersResource(catalog_dir=str(CATALOG_DIR)),
}

defs = dg.Definitions(
    assets=[*INPUTS, FIT_SCORES, fit.fit_effects],
    asset_checks=[fit.probe_variants_change_one_signal],
    resources=RESOURCES,
)
