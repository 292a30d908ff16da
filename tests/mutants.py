"""Hand-run mutation check: does some test fail for every mutated comparison or default of a jobs module?

    .venv/bin/python tests/mutants.py jobs/logchecks.py tests/jobs/test_jobs_verify.py [--json]

Mutations, one at a time (ast): each comparison operator swapped for its boundary or negated neighbour
(`<` -> `<=`, `>=` -> `>`, `==` -> `!=`, `in` -> `not in`, `is` -> `is not`, and back); each default
(function parameter, dataclass field, module-level numeric constant) changed (a number +1 or x2, a bool
flipped, None <-> 0). The mutant is loaded in place of the module (a folder put first on the package's
__path__; the worktree is not touched) and the test file runs under it. A survivor is a mutant no test
kills. Exit 1 when any survive. Not collected by pytest (the name has no test_ prefix).
"""

from __future__ import annotations

import ast
import copy
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SWAP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


def _changed(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if value is None:
        return 0
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 if value else 1.0
    return _SKIP


_SKIP = object()


def _defaults(tree: ast.Module) -> Iterator[ast.Constant]:
    """Constants that are defaults: parameter defaults, class-body field defaults, module-level numbers."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for d in [*node.args.defaults, *node.args.kw_defaults]:
                if isinstance(d, ast.Constant):
                    yield d
        elif isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.value, ast.Constant):
                    yield stmt.value
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and isinstance(stmt.value, ast.Constant):
            yield stmt.value


def mutants(source: str) -> Iterator[tuple[str, str]]:
    """(description, mutated source) for every mutation of `source`."""
    tree = ast.parse(source)
    targets: list[tuple[str, int, int]] = []  # (kind, index in walk order, operator index)
    nodes = list(ast.walk(tree))
    for i, node in enumerate(nodes):
        if isinstance(node, ast.Compare):
            targets += [("cmp", i, k) for k, op in enumerate(node.ops) if type(op) in SWAP]
    default_ids = {id(c) for c in _defaults(tree)}
    targets += [("default", i, 0) for i, n in enumerate(nodes) if id(n) in default_ids]
    for kind, i, k in targets:
        mutated = copy.deepcopy(tree)
        node = list(ast.walk(mutated))[i]
        if kind == "cmp":
            old = type(node.ops[k])
            node.ops[k] = SWAP[old]()
            what = f"line {node.lineno}: {old.__name__} -> {SWAP[old].__name__} in `{ast.unparse(nodes[i])}`"
        else:
            new = _changed(node.value)
            if new is _SKIP:
                continue
            what = f"line {node.lineno}: default {node.value!r} -> {new!r}"
            node.value = new
        yield what, ast.unparse(mutated)


def run(module: Path, tests: list[str]) -> dict:
    package = ".".join(module.with_suffix("").parts[:-1])
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for what, src in mutants(module.read_text()):
            (Path(tmp) / module.name).write_text(src)
            code = (
                f"import sys, {package}; {package}.__path__.insert(0, {tmp!r}); import pytest; "
                f"sys.exit(pytest.main(['-x', '-q', '-p', 'no:cacheprovider', *{tests!r}]))"
            )
            p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
            results.append({"mutant": what, "killed": p.returncode != 0})
            print(f"{'killed  ' if p.returncode else 'SURVIVED'} {what}", file=sys.stderr, flush=True)
    survivors = [r["mutant"] for r in results if not r["killed"]]
    return {"module": str(module), "mutants": len(results), "survivors": survivors}


def main(argv: list[str]) -> int:
    as_json = "--json" in argv
    args = [a for a in argv if a != "--json"]
    if len(args) < 2:
        print("usage: tests/mutants.py MODULE.py TEST_FILE... [--json]", file=sys.stderr)
        return 2
    report = run(Path(args[0]), args[1:])
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['module']}: {report['mutants']} mutants, {len(report['survivors'])} survived")
        for s in report["survivors"]:
            print(f"  survived: {s}")
    return 1 if report["survivors"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
