"""Assets stay thin: which kind of model runs a task is decided in core (one dispatcher per
task), and calls to providers go through the resource, never through core.providers."""

import ast
from pathlib import Path

import resumebias_dagster

ASSETS = Path(resumebias_dagster.__file__).parent / "defs"


def _kind_comparisons(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Attribute) and o.attr == "kind" for o in operands):
                lines.append(node.lineno)
    return lines


def _modules():
    files = sorted(ASSETS.rglob("*.py"))
    assert len(files) > 10
    return [(f, ast.parse(f.read_text(), filename=str(f))) for f in files]


def test_no_asset_dispatches_on_a_model_kind():
    found = {str(f.relative_to(ASSETS)): lines for f, tree in _modules() if (lines := _kind_comparisons(tree))}
    assert not found, f"assets compare a model's kind (dispatch belongs in core's task modules): {found}"


def test_the_check_sees_a_kind_dispatch():
    assert _kind_comparisons(ast.parse("if spec.kind == 'local-llm':\n    pass\n")) == [1]


def test_assets_reach_providers_only_through_the_resource():
    found = []
    for f, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("resumebias_dagster.core.providers"):
                found.append(f"{f.relative_to(ASSETS)}:{node.lineno}")
    assert not found, f"assets import core.providers (use the providers resource): {found}"
