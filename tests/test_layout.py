"""The package's layout holds: no module over 600 lines and no function over 80, core free of Dagster, no import cycles,
and the packages of core/ importing only those on a lower layer (the two studies never each other)."""

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
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            found += [f"{f.relative_to(PACKAGE)}:{node.lineno}" for n in names if n.split(".")[0].startswith("dagster")]
    assert not found, f"core/ must stay free of Dagster: {found}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Which package modules each module imports (anywhere in it: top level or in a function)."""
    modules = {_module_name(f): f for f in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                # `from pkg import module` names a module; `from module import name` names its module.
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def _parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def test_no_import_cycles():
    graph = import_graph()
    # A package's __init__ re-exporting its own modules is not a loop of the design.
    graph = {m: {t for t in deps if t not in _parents(m)} for m, deps in graph.items()}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_check_finds_a_loop():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# The packages of core/ in layers: a package imports only packages on a lower layer, never one
# on its own layer or above, so the two studies stay independent of each other and the shared
# code beneath them cannot reach up into either. tables (the table schemas) sits under
# resumes because the résumé row is a table; models/inference and then providers/fairness
# form the tier of machinery the studies use; history (audits over time) sits beside the studies,
# reading their verdicts as tables; reporting and the cost estimate sit on top.
LAYERS: dict[str, int] = {
    "common": 0,
    "tables": 1,
    "resumes": 2,
    "models": 3,
    "inference": 3,
    "providers": 4,
    "fairness": 4,
    "seniority": 5,
    "jd_audit": 5,
    "ranking": 5,
    "history": 5,
    "reporting": 6,
    "compliance": 6,
    "estimate": 6,
}
CORE = "resumebias_dagster.core"


def _core_package(module: str) -> str | None:
    """The top-level package (or module, as ``estimate``) of core/ that ``module`` belongs to."""
    rest = module[len(CORE) + 1 :] if module.startswith(CORE + ".") else ""
    return rest.split(".")[0] or None


def layer_violations(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Edges (importer, imported) from a core package to one on its own layer or above."""
    found = set()
    for module, deps in graph.items():
        if (here := _core_package(module)) is None:
            continue
        for dep in deps:
            there = _core_package(dep)
            if there is not None and there != here and LAYERS[there] >= LAYERS[here]:
                found.add((module, dep))
    return found


def test_every_core_package_has_a_layer():
    graph = import_graph()
    unplaced = sorted({p for m in graph if (p := _core_package(m)) is not None} - set(LAYERS))
    assert not unplaced, f"place these core packages in LAYERS of tests/test_layout.py: {unplaced}"


def test_core_packages_import_only_lower_layers():
    found = sorted(layer_violations(import_graph()))
    assert not found, (
        "imports against the layer order of core/ ("
        + ", ".join(f"{p}={n}" for p, n in LAYERS.items())
        + "):\n"
        + "\n".join(f"{a} -> {b}" for a, b in found)
    )


def test_the_studies_never_import_each_other():
    graph = import_graph()
    crossing = sorted(
        (m, d)
        for m, deps in graph.items()
        for d in deps
        if {_core_package(m), _core_package(d)} == {"seniority", "jd_audit"}
    )
    assert not crossing, "the two studies import each other (share through core/resumes/): " + ", ".join(
        f"{a} -> {b}" for a, b in crossing
    )


def test_the_layer_check_finds_an_upward_import():
    graph = {
        f"{CORE}.resumes.layout": {f"{CORE}.seniority.names"},
        f"{CORE}.seniority.names": {f"{CORE}.common"},
        f"{CORE}.common": set(),
    }
    assert layer_violations(graph) == {(f"{CORE}.resumes.layout", f"{CORE}.seniority.names")}
    assert layer_violations({f"{CORE}.jd_audit.x": {f"{CORE}.seniority.y"}}) == {
        (f"{CORE}.jd_audit.x", f"{CORE}.seniority.y")
    }


MAX_FUNCTION_LINES = 80


def test_no_function_exceeds_80_lines():
    long = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := node.end_lineno - node.lineno + 1) > MAX_FUNCTION_LINES:
                    long[f"{f.relative_to(PACKAGE)}:{node.lineno} {node.name}"] = n
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them where a step ends): {long}"


def environment_reads(source: str) -> list[int]:
    """Lines of ``source`` that touch the process environment (``os.environ``, ``os.getenv``,
    ``from os import environ/getenv``)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "environb"):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            lines += [node.lineno for a in node.names if a.name in ("environ", "getenv", "environb")]
    return sorted(lines)


def test_only_the_settings_module_reads_the_environment():
    # testing/ holds the test servers' helpers, which set variables for the processes they start.
    found = {
        str(f.relative_to(PACKAGE)): lines
        for f in sorted(PACKAGE.rglob("*.py"))
        if f != PACKAGE / "settings.py" and f.relative_to(PACKAGE).parts[0] != "testing"
        if (lines := environment_reads(f.read_text()))
    }
    assert not found, f"read the environment through resumebias_dagster/settings.py: {found}"


def test_the_environment_check_sees_each_form():
    assert environment_reads("import os\nos.environ.get('X')\nos.getenv('Y')\n") == [2, 3]
    assert environment_reads("from os import environ\n") == [1]
    assert environment_reads("import os\nos.path.join('a')\n") == []


def test_only_the_definitions_import_the_asset_folders():
    # defs/ is the top of the package: dg.load_from_defs_folder (definitions.py) finds its assets,
    # and jobs, automation, resources and core select or serve them by key, never by import.
    defs = "resumebias_dagster.defs"
    found = sorted(
        (m, d)
        for m, deps in import_graph().items()
        if not (m == defs or m.startswith(defs + ".") or m == "resumebias_dagster.definitions")
        for d in deps
        if d == defs or d.startswith(defs + ".")
    )
    assert not found, f"modules outside defs/ import it: {found}"
