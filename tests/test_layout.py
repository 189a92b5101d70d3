"""The package's layout holds: no module over 600 lines, core free of Dagster."""

import ast
from pathlib import Path

import resumebias_dagster

PACKAGE = Path(resumebias_dagster.__file__).parent
MAX_LINES = 600


def test_no_module_exceeds_600_lines():
    long = {
        str(f.relative_to(PACKAGE)): n
        for f in sorted(PACKAGE.rglob("*.py"))
        if (n := len(f.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them along their seams): {long}"


def test_core_imports_no_dagster():
    found = []
    for f in sorted((PACKAGE / "core").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{f.relative_to(PACKAGE)}:{node.lineno}" for n in names if n.split(".")[0].startswith("dagster")]
    assert not found, f"core/ must stay free of Dagster: {found}"
