"""The documentation site holds what the code reads: every environment variable the package
reads and every field a models.yaml entry accepts is in docs/configuration.md, and nothing
documented there is one the code no longer reads. The README stays short and keeps the test
command .ci/run runs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "resumebias_dagster"
CONFIGURATION = REPO / "docs" / "configuration.md"
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` or a bare ``environ``."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ"
    )


def _env_constants(tree: ast.Module) -> dict[str, set[str]]:
    """Module-level ``*_ENV`` constants: a string, or a dict/tuple/list/set of strings."""
    found: dict[str, set[str]] = {}
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else ([node.target] if isinstance(node, ast.AnnAssign) and node.value is not None else [])
        )
        for target in targets:
            if not (isinstance(target, ast.Name) and target.id.endswith("_ENV")):
                continue
            value = node.value
            parts = (
                value.values
                if isinstance(value, ast.Dict)
                else (value.elts if isinstance(value, (ast.Tuple, ast.List, ast.Set)) else [value])
            )
            names = {p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)}
            found[target.id] = {n for n in names if ENV_NAME.match(n)}
    return found


def read_environment_variables() -> dict[str, set[str]]:
    """Every environment variable name the package reads -> the modules that read it.

    Collected from the source: literal names in ``os.environ.get(...)``, ``os.environ[...]``,
    ``os.getenv(...)`` and ``environ.get(...)``, and every module-level constant whose name ends
    in ``_ENV`` (the names the code reads indirectly, e.g. ``os.environ.get(DATA_DIR_ENV)``)."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(REPO))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names: set[str] = set()
        for values in _env_constants(tree).values():
            names |= values
        for node in ast.walk(tree):
            arg = None
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("get", "pop", "setdefault")
                    and _is_environ(func.value)
                ):
                    arg = node.args[0]
                elif isinstance(func, ast.Attribute) and func.attr == "getenv":
                    arg = node.args[0]
            elif isinstance(node, ast.Subscript) and _is_environ(node.value):
                arg = node.slice
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and ENV_NAME.match(arg.value):
                names.add(arg.value)
        for name in names:
            found.setdefault(name, set()).add(module)
    return found


def _section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of any level."""
    lines = text.splitlines()
    assert heading in lines, f"docs/configuration.md lost its heading {heading!r}"
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if re.match(r"^#{1,6} ", lines[i])), len(lines))
    return "\n".join(lines[start:end])


def _first_column(table_text: str) -> set[str]:
    """The backquoted names in the first column of the Markdown table rows of ``table_text``."""
    names = set()
    for line in table_text.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            names |= set(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return names


def documented_environment_variables() -> set[str]:
    return _first_column(
        _section(CONFIGURATION.read_text(encoding="utf-8"), "## Environment variables the package reads")
    )


def documented_model_fields() -> set[str]:
    return _first_column(_section(CONFIGURATION.read_text(encoding="utf-8"), "## models.yaml fields"))


def documented_training_fields() -> set[str]:
    return _first_column(_section(CONFIGURATION.read_text(encoding="utf-8"), "### `training` fields (fine-tuned)"))


def test_every_environment_variable_read_is_documented():
    read = read_environment_variables()
    documented = documented_environment_variables()
    undocumented = {name: sorted(mods) for name, mods in read.items() if name not in documented}
    stale = documented - set(read)
    assert not undocumented, f"read by the package but not in docs/configuration.md: {undocumented}"
    assert not stale, f"documented in docs/configuration.md but read nowhere in the package: {sorted(stale)}"


def test_the_collector_finds_direct_and_indirect_reads():
    read = read_environment_variables()
    assert "RESUMEBIAS_DATA_DIR" in read  # DATA_DIR_ENV = "...", os.environ.get(DATA_DIR_ENV)
    assert "DAGSTER_HOME" in read  # os.environ.get("DAGSTER_HOME")
    assert "OPENAI_API_KEY" in read  # DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", ...}
    tree = ast.parse('import os\nA_ENV = "X_ONE"\nos.getenv("X_TWO")\nos.environ["X_THREE"]\nos.environ.get("X_FOUR")')
    assert _env_constants(tree) == {"A_ENV": {"X_ONE"}}


def test_every_models_yaml_field_is_documented():
    from resumebias_dagster.core.models.kinds import BUILT_IN, COMMON_FIELDS

    accepted = set(COMMON_FIELDS).union(*(kind.fields for kind in BUILT_IN))
    documented = documented_model_fields()
    assert not accepted - documented, (
        f"models.yaml fields not in docs/configuration.md: {sorted(accepted - documented)}"
    )
    assert not documented - accepted, f"documented models.yaml fields the code refuses: {sorted(documented - accepted)}"


def test_every_training_field_is_documented():
    from resumebias_dagster.core.models.model_config import TRAINING_FIELDS

    documented = documented_training_fields()
    assert documented == set(TRAINING_FIELDS), (
        f"undocumented: {sorted(set(TRAINING_FIELDS) - documented)}; "
        f"documented, not accepted: {sorted(documented - set(TRAINING_FIELDS))}"
    )


def test_readme_is_short_and_keeps_the_ci_test_command():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150, "README.md over 150 lines: move the detail into docs/"
    command = "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && python -m pytest"
    assert command in readme
    assert command in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_every_docs_page_is_in_the_site_navigation():
    import yaml

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8").replace("!!python/name:", ""))
    listed: set[str] = set()

    def walk(entry):
        if isinstance(entry, str):
            listed.add(entry)
        elif isinstance(entry, dict):
            for value in entry.values():
                walk(value)
        elif isinstance(entry, list):
            for value in entry:
                walk(value)

    walk(config["nav"])
    pages = {str(p.relative_to(REPO / "docs")) for p in (REPO / "docs").rglob("*.md")}
    assert pages == listed, f"not in nav: {sorted(pages - listed)}; in nav, missing: {sorted(listed - pages)}"


def test_the_readme_and_the_home_page_list_every_page():
    # Issue 41: the two lists had drifted apart (and from the site's navigation).
    pages = {str(p.relative_to(REPO / "docs")) for p in (REPO / "docs").rglob("*.md")} - {"index.md"}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    home = (REPO / "docs" / "index.md").read_text(encoding="utf-8")
    assert not (missing := sorted(p for p in pages if f"](docs/{p})" not in readme)), f"README does not link {missing}"
    assert not (missing := sorted(p for p in pages if f"]({p})" not in home)), f"index.md does not link {missing}"


def test_docs_keep_the_prompt_injection_vocabulary():
    """tests/test_vocabulary.py's rule, over the documentation site."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_vocabulary", REPO / "tests" / "test_vocabulary.py")
    vocabulary = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vocabulary)
    hits = [
        f"{path.relative_to(REPO)}:{i}: {line.strip()[:120]}"
        for path in sorted((REPO / "docs").rglob("*.md"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if vocabulary.BARE.search(line)
    ]
    assert not hits, "\n".join(hits)
