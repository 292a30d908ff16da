"""preflight/langhost.py's warm-up: what the gate imports of a program before the CLI asks to run it.

The program's runs themselves (served to the real CLI) are tested end to end in tests/integration/gate; these
need only Python. The lazy modules are made with the SDK's own `pulumi._utils.lazy_import`, as
pulumi_azure_native makes its submodules."""

from __future__ import annotations

import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from preflight import langhost


@pytest.fixture
def program(tmp_path: Path) -> Iterator[Path]:
    """A program folder whose package holds a lazily imported module, as components/ holds
    pulumi_azure_native's; its modules are removed from sys.modules afterwards."""
    root = tmp_path / "prog"
    (root / "warmpkg").mkdir(parents=True)
    (root / "warmlazy.py").write_text("LOADED = True\n")
    (root / "warmpkg" / "__init__.py").write_text(
        "import pulumi._utils\n\nlazy = pulumi._utils.lazy_import('warmlazy')\n"
    )
    (root / "__main__.py").write_text(
        textwrap.dedent(
            """\
            import os
            import warmpkg
            from warmpkg import lazy
            from . import sibling  # relative: not the program's top level to import
            import no_such_module_here


            def main() -> None:
                import inside_a_function
            """
        )
    )
    before, path = set(sys.modules), list(sys.path)
    yield root
    for name in set(sys.modules) - before:
        del sys.modules[name]
    sys.path[:] = path


def test_the_top_level_imports_are_the_absolute_ones_outside_functions(program: Path) -> None:
    assert langhost._top_level_imports(program / "__main__.py") == [
        "os",
        "warmpkg",
        "warmpkg",
        "no_such_module_here",
    ]


def test_a_program_that_does_not_parse_has_nothing_to_warm(tmp_path: Path) -> None:
    (tmp_path / "__main__.py").write_text("def broken(:\n")
    assert langhost._top_level_imports(tmp_path / "__main__.py") == []
    assert langhost._top_level_imports(tmp_path / "missing.py") == []


def test_the_warm_up_imports_the_program_and_loads_the_lazy_modules_it_holds(program: Path) -> None:
    warming = langhost.warm(program)
    assert warming.done.wait(timeout=30)
    assert "warmpkg" in sys.modules
    lazy = sys.modules["warmlazy"]
    # loaded: a plain module now, with its attribute (a _LazyModule turns itself into a plain module on load)
    assert type(lazy) is types.ModuleType and vars(lazy)["LOADED"] is True
    # a failed import (no_such_module_here) is left to the program's run: the warm-up still ends
    assert "no_such_module_here" not in sys.modules


def test_a_lazy_module_the_program_does_not_hold_stays_lazy(program: Path) -> None:
    (program / "untouched.py").write_text("X = 1\n")
    import pulumi._utils

    sys.path.insert(0, str(program))
    outside = pulumi._utils.lazy_import("untouched")  # held here (a test module), not by the program
    warming = langhost.warm(program)
    assert warming.done.wait(timeout=30)
    assert type(outside).__name__ == "_LazyModule"


def test_the_warm_up_puts_the_program_first_on_the_path_once(program: Path) -> None:
    warming = langhost.warm(program)
    warming.done.wait(timeout=30)
    assert warming.added_path and sys.path[0] == str(program.resolve())
    again = langhost.warm(program)
    again.done.wait(timeout=30)
    assert not again.added_path and sys.path.count(str(program.resolve())) == 1


@pytest.mark.parametrize(
    ("file", "own"),
    [
        ("{folder}/components/network.py", True),
        ("{folder}/__main__.py", True),
        ("{prefix}/lib/python3.11/site-packages/pulumi_azure_native/__init__.py", False),
        ("{folder}-other/mod.py", False),  # a sibling folder whose name starts with the program's
        (None, False),  # a built-in module has no file
    ],
)
def test_own_modules_are_the_folders_not_an_interpreters_inside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file: str | None, own: bool
) -> None:
    folder = tmp_path / "prog"
    monkeypatch.setattr(sys, "prefix", str(folder / ".venv"))  # a virtualenv inside the program's folder
    path = file.format(folder=folder, prefix=sys.prefix) if file else None
    assert langhost._is_own(path, folder) is own


def test_a_failed_import_does_not_stop_the_warm_up_of_the_ones_after_it(tmp_path: Path) -> None:
    root = tmp_path / "prog2"
    root.mkdir()
    (root / "warmafter.py").write_text("X = 1\n")
    (root / "__main__.py").write_text("import no_such_module_first\nimport warmafter\n")
    before, path = set(sys.modules), list(sys.path)
    try:
        assert langhost.warm(root).done.wait(timeout=30)
        assert "warmafter" in sys.modules
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]
        sys.path[:] = path
