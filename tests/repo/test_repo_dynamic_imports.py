"""No module name of this project written out in full where it is resolved at run time: installed, every
package is `azml_gpu.<package>` and only `import`/`from` statements are rewritten by the build
(packaging/azml_gpu_build.py), so `importlib.import_module("jobs.x")`, `find_spec("policies")`,
`resources.files("vmsizes")` or `[sys.executable, "-m", "preflight.provider"]` work in the checkout and fail
from the wheel. Write them relative to the module's own package (`__package__`, `__name__`, `import_module(
".x", __name__)`, `preflight.layout.own`). Read with `ast`, nothing imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("azroles", "components", "jobs", "policies", "preflight", "stackconfig", "vmsizes")
#: Calls whose first argument is a module (or package) name resolved at run time.
RESOLVERS = {
    "import_module",
    "__import__",
    "find_spec",
    "run_module",
    "files",
    "resolve_name",
    "spec_from_loader",
}
#: Calls that put the installed prefix on a name (`preflight.layout.own`) or take a module's own name apart.
PREFIXED = {"own", "removesuffix", "removeprefix"}
#: Module names of ours that go through a resolver adding the installed prefix, each with where.
RESOLVED_ELSEWHERE = {
    ("jobs/cli.py", "COMMANDS"): "jobs.cli._installed puts each under this package's own name",
}


def _ours(text: str) -> bool:
    return text.split(".")[0] in PRODUCT and all(part.isidentifier() for part in text.split("."))


def _modules() -> set[str]:
    names = set()
    for package in PRODUCT:
        for path in (ROOT / package).rglob("*.py"):
            if ".venv" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _called(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def _text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def absolute_references(source: str, rel: str, modules: set[str]) -> list[str]:
    """Each run-time reference to one of our modules by its full name in `source`, as `line: what`."""
    tree = ast.parse(source)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and (rel, t.id) in RESOLVED_ELSEWHERE for t in targets):
                skipped |= {id(n) for n in ast.walk(node)}
        if isinstance(node, ast.Call) and _called(node) in PREFIXED:
            skipped |= {id(a) for a in node.args}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Call) and node.args and _called(node) in RESOLVERS:
            first = node.args[0]
            if isinstance(first, ast.JoinedStr) and first.values:
                first = first.values[0]
            if _text(first) and _ours(first.value.rstrip(".")):
                found.append(f"{node.lineno}: {_called(node)}({first.value!r})")
                skipped.add(id(first))  # ast.walk visits a call before its arguments: one report each
        if isinstance(node, ast.List | ast.Tuple):
            for a, b in zip(node.elts, node.elts[1:], strict=False):
                if _text(a) and a.value == "-m" and _text(b) and _ours(b.value):
                    found.append(f"{node.lineno}: '-m', {b.value!r}")
        if _text(node) and "." in node.value and node.value in modules:
            found.append(f"{node.lineno}: {node.value!r}")
    return sorted(set(found))


@pytest.mark.parametrize("package", PRODUCT)
def test_no_module_of_ours_is_named_in_full_where_it_is_resolved_at_run_time(package: str) -> None:
    modules = _modules()
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        if ".venv" in path.parts:
            continue
        rel = str(path.relative_to(ROOT))
        found += [
            f"{rel}:{hit}" for hit in absolute_references(path.read_text(encoding="utf-8"), rel, modules)
        ]
    assert found == [], "write these relative to the module's own package (module docstring)"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('importlib.import_module("jobs.commands.plan")\n', ["1: import_module('jobs.commands.plan')"]),
        ('import_module(f"jobs.commands.{name}")\n', ["1: import_module('jobs.commands.')"]),
        ('importlib.util.find_spec("policies")\n', ["1: find_spec('policies')"]),
        ('resources.files("vmsizes")\n', ["1: files('vmsizes')"]),
        ('runpy.run_module("preflight", run_name="__main__")\n', ["1: run_module('preflight')"]),
        ('argv = [sys.executable, "-m", "preflight.provider"]\n', ["1: '-m', 'preflight.provider'"]),
        ('LAZY = {"validate": "stackconfig.validation"}\n', ["1: 'stackconfig.validation'"]),
        ('COMMANDS = {"plan": "jobs.commands.plan"}\n', ["1: 'jobs.commands.plan'"]),  # outside jobs/cli.py
    ],
)
def test_each_form_is_found(source: str, expected: list[str]) -> None:
    assert absolute_references(source, "x.py", {"stackconfig.validation", "jobs.commands.plan"}) == expected


@pytest.mark.parametrize(
    "source",
    [
        'importlib.import_module(".validation", __name__)\n',
        'importlib.import_module(f"{__package__}.commands.plan")\n',
        "resources.files(__package__)\n",
        'find_spec("pulumi_azure_native")\n',
        'argv = [sys.executable, "-m", __package__]\n',
        'argv = [sys.executable, "-m", "doubles.localml"]\n',
        'hint = "python -m jobs plan (stackconfig.validation checks it)"\n',
        'COMMANDS = {"plan": "jobs.commands.plan"}\n',  # only in jobs/cli.py (RESOLVED_ELSEWHERE)
        'name = own("stackconfig.validation")\n',
        'PREFIX = __name__.removesuffix("stackconfig.validation")\n',
    ],
)
def test_relative_names_and_others_modules_pass(source: str) -> None:
    rel = "jobs/cli.py" if source.startswith("COMMANDS") else "x.py"
    assert absolute_references(source, rel, {"stackconfig.validation", "jobs.commands.plan"}) == []
