"""The house's imports: no module imports itself round a circle, and no room imports a room above it.

Read from the code's own `import` statements (module level and inside functions alike: a lazy import is still an
arrow; only `if TYPE_CHECKING:` blocks, which never run, are left out). A room is a folder of `steplab/`
(`steplab.trainer`, ...) or of `steplab_ui/` (`steplab_ui.shell`, ...), one of their top-level modules, `app_pages`,
or an entry script. `FLOORS` is the map of `docs/DEVELOPING.md`, from the ground up: a room imports only rooms on
lower floors (rooms on one floor do not import each other).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("steplab", "steplab_ui", "app_pages")
FLOORS: tuple[tuple[str, ...], ...] = (
    ("steplab", "steplab.i18n"),
    ("steplab.errors",),
    ("steplab.trainer",),
    ("steplab.trl",),
    ("steplab.dataset",),
    ("steplab.io",),
    ("steplab.simulation",),
    ("steplab.teaching",),
    ("steplab.classroom", "steplab.labs", "steplab.runfiles"),
    ("steplab.explain_cli",),
    ("steplab.cli",),
    ("steplab.__main__", "steplab_ui"),
    ("steplab_ui.shell",),
    ("steplab_ui.widgets",),
    ("steplab_ui.views",),
    ("app_pages", "app", "serve"),
)
FLOOR = {room: number for number, rooms in enumerate(FLOORS) for room in rooms}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    files = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    files += [ROOT / "app.py", ROOT / "serve.py"]
    return {_module_name(path): path for path in files if "migrations" not in path.parts}


MODULES = _sources()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under `if TYPE_CHECKING:` (they never run)."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
    return hidden


def _resolve(name: str) -> str | None:
    """The project module an import names (the longest prefix that is one), None outside the project."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in MODULES:
            return candidate
        parts.pop()
    return None


def imports(module: str) -> set[str]:
    """The project modules `module` imports when it runs (`from a import b` names `a.b` when that is a module)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    hidden = _type_checking_nodes(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {target for target in map(_resolve, names) if target and target != module}
    return found


GRAPH = {module: imports(module) for module in MODULES}


def room(module: str) -> str:
    """The room a module stands in: its folder under `steplab/` or `steplab_ui/`, else its package, else itself."""
    parts = module.split(".")
    if parts[0] in ("steplab", "steplab_ui") and len(parts) > 1:
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_reader_finds_the_imports_it_should():
    """The graph is not empty by mistake: known arrows are there, a TYPE_CHECKING-only one is not."""
    assert "steplab.trainer.profiles" in GRAPH["steplab.trainer.schedules"]
    assert "steplab.simulation.lr_curve" in GRAPH["steplab_ui.views.lesson_widgets"]  # imported inside a function
    assert "steplab.labs.accumulation" not in GRAPH["steplab.labs.readings"]  # only under TYPE_CHECKING
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_round_a_circle():
    assert _circles(GRAPH) == []


def test_every_room_has_a_floor():
    assert {room(module) for module in GRAPH} <= set(FLOOR)


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_room_imports_a_room_above_it(module):
    here = room(module)
    upward = sorted(target for target in GRAPH[module]
                    if room(target) != here and FLOOR.get(room(target), -1) >= FLOOR.get(here, -1))
    assert upward == [], f"{module} ({here}, floor {FLOOR.get(here)}) imports {upward}"
