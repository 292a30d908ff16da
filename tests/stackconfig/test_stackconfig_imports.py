"""No import cycle between stackconfig's modules (issue 26, "Structure": models <-> combinations was one).

Walks every module's imports with `ast`, those under `if TYPE_CHECKING:` included (a cycle hidden there is
still a cycle of the design), and looks for a cycle among the package's own modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "stackconfig"


def _imports(path: Path) -> set[str]:
    """The stackconfig modules a module imports (`from stackconfig import x` counts x when it is a module)."""
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "stackconfig":
                out |= {a.name for a in node.names if a.name in modules}
            elif node.module.startswith("stackconfig."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("stackconfig.")}
    return out - {path.stem}


def graph() -> dict[str, set[str]]:
    return {p.stem: _imports(p) for p in sorted(PACKAGE.glob("*.py")) if p.stem != "__init__"}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle found by depth-first search, each starting at its smallest module name."""
    found: set[tuple[str, ...]] = set()

    def visit(node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt in path:
                cycle = path[path.index(nxt) :]
                start = cycle.index(min(cycle))
                found.add(tuple(cycle[start:] + cycle[:start]))
            else:
                visit(nxt, [*path, nxt])

    for node in sorted(edges):
        visit(node, [node])
    return [list(c) for c in sorted(found)]


def test_the_walker_finds_a_cycle_when_there_is_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_walker_sees_the_models_combinations_edge() -> None:
    edges = graph()
    assert "combinations" in edges["models"]  # the edge that used to close the cycle
    assert "models" not in edges["combinations"]


def test_stackconfig_has_no_import_cycle() -> None:
    assert cycles(graph()) == []
