"""Configuration is data: the package reads its settings from the environment, the audit file
and run config, and never writes them into ``os.environ`` (where a later import or another
thread would read them as if the operator had set them)."""

from __future__ import annotations

import ast
from pathlib import Path

import resumebias_dagster

PACKAGE = Path(resumebias_dagster.__file__).parent
# Variables the libraries read when they are imported (progress bars off in a log): not ours.
ALLOWED = {"settings.py:set_for_libraries"}
WRITES = {"update", "setdefault", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name)


def _written(node: ast.AST) -> bool:
    if isinstance(node, (ast.Assign, ast.Delete)):
        return any(isinstance(t, ast.Subscript) and _is_environ(t.value) for t in node.targets)
    if isinstance(node, ast.AugAssign):
        return isinstance(node.target, ast.Subscript) and _is_environ(node.target.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return (node.func.attr in WRITES and _is_environ(node.func.value)) or node.func.attr == "putenv"
    return False


def environment_writes(source: str, name: str) -> list[str]:
    """``<file>:<function>:<line>`` of each write to ``os.environ`` (or ``os.putenv``) in ``source``."""
    found = []

    def visit(node: ast.AST, where: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            where = node.name
        if _written(node) and f"{name}:{where}" not in ALLOWED:
            found.append(f"{name}:{where}:{node.lineno}")  # type: ignore[attr-defined]
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    visit(ast.parse(source), "<module>")
    return found


def test_nothing_in_the_package_writes_the_environment():
    found = [
        hit
        for f in sorted(PACKAGE.rglob("*.py"))
        if "testing" not in f.relative_to(PACKAGE).parts
        for hit in environment_writes(f.read_text(), str(f.relative_to(PACKAGE)))
    ]
    assert not found, f"settings are data, never written into os.environ: {found}"


def test_the_check_finds_each_way_of_writing():
    source = (
        "import os\n"
        "def a():\n    os.environ['X'] = '1'\n"
        "def b():\n    os.environ.update({'X': '1'})\n"
        "def c():\n    os.putenv('X', '1')\n"
        "def d():\n    del os.environ['X']\n"
        "def e():\n    return os.environ.get('X')\n"
    )
    assert [hit.rsplit(":", 1)[0] for hit in environment_writes(source, "m.py")] == [
        "m.py:a",
        "m.py:b",
        "m.py:c",
        "m.py:d",
    ]
