"""Catalog presets (``preset:NAME``, catalog/presets/) through the catalog resource and the
environment: a packaged folder, not a path of the user's, and an unknown one refused."""

import pytest

from resumebias_dagster.catalog import CATALOG_DIR_ENV, PACKAGED_DIR, CatalogError, catalog_path, presets
from resumebias_dagster.core.jd_audit.probes import load_probe_axes
from resumebias_dagster.resources.catalog import CatalogResource
from resumebias_dagster.settings import ALLOWED_ROOTS_ENV, ConfigPathError, allowed_roots


def test_a_preset_in_run_config_is_the_packaged_folder_not_a_checked_path(monkeypatch, data_dir):
    monkeypatch.delenv(CATALOG_DIR_ENV, raising=False)
    monkeypatch.delenv(ALLOWED_ROOTS_ENV, raising=False)
    folder = CatalogResource(catalog_dir="preset:study003").folder()
    assert folder == str(PACKAGED_DIR / "presets" / "study003")
    assert "mohammed_al_said" in next(a for a in load_probe_axes(folder).axes if a.id == "firstName").levels
    # Any other value is still a path that must lie under the allowed folders.
    with pytest.raises(ConfigPathError, match="catalog.catalog_dir: preset-study003 is outside the folders"):
        CatalogResource(catalog_dir="preset-study003").folder()


def test_an_unknown_preset_is_refused_listing_the_presets(monkeypatch):
    assert "study003" in presets()
    with pytest.raises(
        CatalogError,
        match=r"^catalog.catalog_dir: catalog preset 'study004' \(from 'preset:study004'\) "
        r"does not exist; the presets are preset:study003",
    ):
        CatalogResource(catalog_dir="preset:study004").folder()
    monkeypatch.setenv(CATALOG_DIR_ENV, "preset:study004")
    with pytest.raises(CatalogError, match=r"catalog preset 'study004' .* the presets are preset:study003"):
        catalog_path("probe_axes.yaml")


def test_a_preset_in_the_environment_overlays_the_packaged_catalog(monkeypatch, data_dir):
    monkeypatch.setenv(CATALOG_DIR_ENV, "preset:study003")
    monkeypatch.delenv(ALLOWED_ROOTS_ENV, raising=False)
    assert catalog_path("fit_design.yaml") == PACKAGED_DIR / "presets" / "study003" / "fit_design.yaml"
    assert catalog_path("people.yaml") == PACKAGED_DIR / "people.yaml"  # not in the preset: packaged
    assert catalog_path("job_descriptions") == PACKAGED_DIR / "job_descriptions"
    # A preset names no folder of the operator's: it widens nothing run config may name.
    assert allowed_roots() == [data_dir]
