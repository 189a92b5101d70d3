"""The wire registry: clients are imported by name when a model of their wire runs, and
base.py, which every client imports, imports none of them."""

import ast
import sys
from pathlib import Path

import pytest

import resumebias_dagster.core.providers as providers
from resumebias_dagster.core.providers.registry import WIRES, client_class
from resumebias_dagster.core.providers.types import ProviderConfigError

FOLDER = Path(providers.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add(node.module or "")
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def test_base_imports_no_client():
    clients = {module for module, _ in WIRES.values()}
    assert len(clients) == 4
    assert not _imported_modules(FOLDER / "base.py") & clients


def test_every_wire_names_a_client_class_of_base(settings_for):
    from resumebias_dagster.core.models.model_config import parse_models
    from resumebias_dagster.core.providers.base import ProviderClient
    from resumebias_dagster.core.providers.types import ProviderSettings

    for wire in WIRES:
        if wire == "http":
            entry = {
                "name": "s",
                "kind": "http",
                "url": "http://127.0.0.1:9/score",
                "body": "{}",
                "answer": {"score": "s"},
            }
            settings = ProviderSettings.from_spec(parse_models({"models": [entry]}, "test")[0])
        else:
            settings = settings_for(wire if wire != "google" else "gemini", "http://127.0.0.1:9/v1")
        assert issubclass(client_class(settings), ProviderClient)


def test_an_unknown_wire_is_refused_naming_the_known_ones(settings_for):
    from dataclasses import replace

    settings = replace(settings_for("openai", "http://127.0.0.1:9/v1"), provider="telepathy")
    with pytest.raises(
        ProviderConfigError, match="unknown provider 'telepathy' \\(known: openai, anthropic, google, http\\)"
    ):
        client_class(settings)


def test_the_registry_imports_no_sdk_until_asked():
    code = "import sys, resumebias_dagster.core.providers.registry; print('openai' in sys.modules)"
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
