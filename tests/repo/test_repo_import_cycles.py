"""No import cycles between the project's modules (DEVELOPERS.md: "no import cycles").

Every import counts, as a reader of the code sees it: at module level, inside functions (deferred imports) and
under `if TYPE_CHECKING:` (a type-only cycle is still two modules that each need the other). Read with `ast`,
so nothing is imported; relative imports are resolved; `from pkg import name` is an edge to `pkg.name` when
that is a module, else to `pkg`."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
#: jobs/payload: scripts Azure ML runs alone.
SKIP_DIRS = {".venv", "node_modules", "__pycache__", "tests", "payload"}


def packages(root: Path) -> list[str]:
    return sorted(p.parent.name for p in root.glob("*/__init__.py") if p.parent.name not in SKIP_DIRS)


def modules(root: Path, pkgs: Iterable[str]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for pkg in pkgs:
        for f in (root / pkg).rglob("*.py"):
            rel = f.relative_to(root)
            if SKIP_DIRS & set(rel.parts[:-1]):
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = f
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules `name` imports anywhere in its file."""

    def resolve(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" for a in node.names]
        out |= {r for t in targets if (r := resolve(t))}
    out.discard(name)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def project_cycles(root: Path) -> list[list[str]]:
    known = modules(root, packages(root))
    return cycles({name: imports(name, path, known) for name, path in known.items()})


PACKAGES = packages(ROOT)
CYCLES = project_cycles(ROOT)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_through(package: str) -> None:
    mine = [c for c in CYCLES if any(m == package or m.startswith(package + ".") for m in c)]
    assert mine == [], f"import cycle(s) through {package}: " + "; ".join(" <-> ".join(c) for c in mine)


def test_every_project_package_is_covered() -> None:
    expected = {"azroles", "components", "doubles", "jobs", "policies", "preflight", "stackconfig", "vmsizes"}
    assert expected <= set(PACKAGES)


#: The test doubles (doubles/: Azure's control plane, the CLI builder): they may use the product, never the
#: other way round (issue 40: "product never imports a double").
DOUBLES = "doubles"


def double_imports(root: Path) -> list[str]:
    known = modules(root, packages(root))
    return sorted(
        f"{name} imports {target}"
        for name, path in known.items()
        if not (name == DOUBLES or name.startswith(DOUBLES + "."))
        for target in imports(name, path, known)
        if target == DOUBLES or target.startswith(DOUBLES + ".")
    )


def test_no_product_module_imports_a_double() -> None:
    assert double_imports(ROOT) == []
    # the program and the stack files are product too
    main = ast.parse((ROOT / "__main__.py").read_text())
    assert not [
        n for n in ast.walk(main) if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(DOUBLES)
    ]


def test_a_product_module_importing_a_double_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "doubles/__init__.py": "",
            "doubles/fake.py": "from prod import thing\n",  # a double may import the product
            "prod/__init__.py": "",
            "prod/thing.py": "def f():\n    from doubles import fake\n",  # deferred: still counted
        },
    )
    assert double_imports(root) == ["prod.thing imports doubles.fake"]


def _tree(tmp: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    return tmp


def test_a_type_checking_cycle_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "a/__init__.py": "",
            "a/plane.py": "from a import arm\n",
            "a/arm.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from a.plane import P\n",
        },
    )
    assert project_cycles(root) == [["a.arm", "a.plane"]]


def test_a_deferred_and_relative_cycle_across_packages_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "a/__init__.py": "",
            "a/x.py": "def f():\n    from b import y\n",
            "b/__init__.py": "",
            "b/y.py": "from . import z\n",
            "b/z.py": "import a.x\n",
        },
    )
    assert project_cycles(root) == [["a.x", "b.y", "b.z"]]


def test_one_way_imports_are_no_cycle(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {"a/__init__.py": "from a.x import f\n", "a/x.py": "import os\n", "a/y.py": "from a import x\n"},
    )
    assert project_cycles(root) == []
