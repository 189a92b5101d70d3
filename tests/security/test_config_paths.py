"""What anyone who can reach the UI can do with run config, and where the data files may live.

Run config can name files on the server: the importer's paths, the providers resource's
models file, catalog folder and store file, the catalog resource's folder, a local embedding
model. Each must lie under a folder the operator chose (the data directory, the environment's
catalog folder, RESUMEBIAS_ALLOWED_ROOTS). Database files must sit on a local disk, and an
upstream that was never materialised is named, not read as an empty table. Each test failed
on the code before issue 10.
"""

from __future__ import annotations

import os

import dagster as dg
import pytest
import yaml

from resumebias_dagster.core.providers import ResponseStore
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.resources.providers import ProvidersResource

SECRET_LINE = "OPENAI_API_KEY=sk-server-secret-0c8e11aa55\n"


@pytest.fixture
def outside(tmp_path):
    """A folder outside the data directory holding a secret file (say /etc or a home folder)."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "secret.env").write_text(SECRET_LINE)
    (folder / "models.yaml").write_text(yaml.safe_dump({"models": []}))
    return folder


def _failure_text(result) -> str:
    return " ".join(
        str(e.event_specific_data.error.to_string()) for e in result.all_events if e.event_type_value == "STEP_FAILURE"
    )


def test_the_importer_reads_no_file_outside_the_allowed_folders(data_dir, outside):
    from resumebias_dagster.defs.seniority_study.predictions import (
        imported_predictions,
    )

    config = {"ops": {"imported_predictions": {"config": {"import_paths": [str(outside / "secret.env")]}}}}
    result = dg.materialize([imported_predictions], run_config=config, raise_on_error=False)
    assert not result.success
    text = _failure_text(result)
    assert "imported_predictions.import_paths" in text and "outside the folders run config may name" in text
    assert "sk-server-secret" not in text


def test_a_symlink_under_the_data_directory_does_not_reach_outside(data_dir, outside):
    from resumebias_dagster.defs.seniority_study.predictions import (
        imported_predictions,
    )

    link = data_dir / "innocent.csv"
    link.symlink_to(outside / "secret.env")
    config = {"ops": {"imported_predictions": {"config": {"import_paths": [str(link)]}}}}
    result = dg.materialize([imported_predictions], run_config=config, raise_on_error=False)
    assert not result.success and "outside the folders run config may name" in _failure_text(result)


@pytest.mark.parametrize("setting", ["models_file", "catalog_dir", "store_path"])
def test_the_providers_resource_refuses_paths_outside_the_allowed_folders(setting, data_dir, outside):
    value = {"models_file": outside / "models.yaml", "catalog_dir": outside, "store_path": outside / "r.sqlite"}[
        setting
    ]

    @dg.asset
    def uses_providers(providers: ProvidersResource) -> None:
        pass

    with pytest.raises(Exception) as raised:
        dg.materialize([uses_providers], resources={"providers": ProvidersResource(**{setting: str(value)})})
    chain, error = [], raised.value
    while error is not None:
        chain.append(str(error))
        error = error.__cause__ or error.__context__
    assert any(f"providers.{setting}" in c and "outside the folders" in c for c in chain), chain
    assert not (outside / "r.sqlite").exists()


def test_the_catalog_resource_refuses_a_folder_outside_the_allowed_folders(data_dir, outside):
    from resumebias_dagster.settings import ConfigPathError

    with pytest.raises(ConfigPathError, match="catalog.catalog_dir"):
        CatalogResource(catalog_dir=str(outside)).folder()


def test_allowed_folders_extend_by_environment(data_dir, outside, monkeypatch):
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", os.pathsep.join(["/nonexistent", str(outside)]))
    assert CatalogResource(catalog_dir=str(outside)).folder() == str(outside)
    inside = data_dir / "catalog"
    inside.mkdir()
    monkeypatch.delenv("RESUMEBIAS_ALLOWED_ROOTS")
    assert CatalogResource(catalog_dir=str(inside)).folder() == str(inside)


def test_a_local_embedding_model_must_lie_under_the_allowed_folders(data_dir, outside):
    from resumebias_dagster.defs.seniority_study.resumes import base_resumes
    from resumebias_dagster.defs.seniority_study.variants import (
        style_validation,
        style_variants,
    )
    from resumebias_dagster.resources.compute import ComputeResource
    from resumebias_dagster.resources.storage import default_io_manager

    config = {
        "ops": {
            "base_resumes": {"config": {"n_per_level": 1}},
            "style_validation": {"config": {"embedding_model": str(outside)}},
        }
    }
    result = dg.materialize(
        [base_resumes, style_variants, style_validation],
        run_config=config,
        raise_on_error=False,
        resources={
            "catalog": CatalogResource(),
            "compute": ComputeResource(),
            "providers": ProvidersResource(),
            "io_manager": default_io_manager(),
        },
    )
    assert not result.success
    assert "style_validation.embedding_model" in _failure_text(result)


# ------------------------------------------------------------------ 14: database files on a local disk


def _mounts(tmp_path, fs_type: str):
    table = tmp_path / "mounts"
    table.write_text(
        "overlay / overlay rw 0 0\n"
        f"server:/export {tmp_path / 'shared'} {fs_type} rw,relatime 0 0\n"
        f"tmpfs {tmp_path / 'shared' / 'scratch'} tmpfs rw 0 0\n"
    )
    return table


# The second four: folders shared from a host into a VM or container (issue 25, item 10).
@pytest.mark.parametrize("fs_type", ["nfs4", "cifs", "fuse.s3fs", "vboxsf", "virtiofs", "fuse.grpcfuse", "drvfs"])
def test_the_response_store_refuses_a_network_filesystem(fs_type, tmp_path, monkeypatch):
    from resumebias_dagster.core.common import filesystems
    from resumebias_dagster.core.common.filesystems import NetworkFilesystemError

    monkeypatch.setattr(filesystems, "MOUNTS_FILE", str(_mounts(tmp_path, fs_type)))
    with pytest.raises(NetworkFilesystemError, match=rf"response store .*{fs_type}.*local disk"):
        ResponseStore(tmp_path / "shared" / "data" / "responses.sqlite")
    assert not (tmp_path / "shared").exists()
    # A local mount below the network one is fine.
    (tmp_path / "shared" / "scratch").mkdir(parents=True)
    with ResponseStore(tmp_path / "shared" / "scratch" / "responses.sqlite") as store:
        assert store.count() == 0


def test_the_duckdb_file_refuses_a_network_filesystem(tmp_path, monkeypatch):
    from resumebias_dagster.core.common import filesystems
    from resumebias_dagster.defs.jd_audit.fit import job_descriptions
    from resumebias_dagster.resources.storage import ResumebiasIOManager

    monkeypatch.setattr(filesystems, "MOUNTS_FILE", str(_mounts(tmp_path, "nfs")))
    monkeypatch.setenv("RESUMEBIAS_ALLOWED_ROOTS", str(tmp_path))
    io_manager = ResumebiasIOManager(database=str(tmp_path / "shared" / "resumebias.duckdb"), schema="audit")
    with pytest.raises(Exception) as raised:
        dg.materialize([job_descriptions], resources={"io_manager": io_manager, "catalog": CatalogResource()})
    chain, error = [], raised.value
    while error is not None:
        chain.append(str(error))
        error = error.__cause__ or error.__context__
    assert any("DuckDB file" in c and "network filesystem (nfs)" in c for c in chain), chain


def test_the_mount_table_of_this_machine_is_read(tmp_path):
    from resumebias_dagster.core.common.filesystems import filesystem_of

    assert filesystem_of(tmp_path) is not None  # Linux: /proc/self/mounts
    assert filesystem_of(tmp_path, mounts_file=tmp_path / "missing") is None


# ------------------------------------------------------------------ 17: an upstream never materialised


def test_an_unpartitioned_upstream_never_materialised_is_named(data_dir):
    from resumebias_dagster.defs.jd_audit.fit import probe_variants
    from resumebias_dagster.defs.seniority_study.resumes import base_resumes
    from resumebias_dagster.defs.user_resumes.files import user_resume_probes, user_resumes
    from resumebias_dagster.resources.storage import default_io_manager

    result = dg.materialize(
        [base_resumes, user_resumes, user_resume_probes, probe_variants],
        selection=[probe_variants.key],
        raise_on_error=False,
        resources={"io_manager": default_io_manager(), "catalog": CatalogResource(), "providers": ProvidersResource()},
    )
    assert not result.success
    text = _failure_text(result)
    assert "'base_resumes' has not been materialised" in text and "materialise base_resumes first" in text
    assert "KeyError" not in text
