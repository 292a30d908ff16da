"""The test layout is the map from code to tests (docs/testing.md): outside tests/integration/, every test
file
`tests/<package>/<sub>/test_<module>.py` tests the module `<package>/<sub>/<module>.py` (or the package
`<package>/<sub>/<module>/`), every test folder is a package, and nothing that needs `make test` sits outside
tests/integration/ (tests/conftest.py enforces that part when `make check` runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
#: Folders whose tests are not a module's: the repository as a whole, the stack program, integration topics.
NOT_MAPPED = {"repo", "integration", "fixtures"}
#: Test files for something that is not one module, each with why.
OWN_SUBJECT = {
    "tests/program/test_main.py": "the stack program, __main__.py at the repository root",
    "tests/policies/test_pack.py": "policies/ as a whole: its requirements.txt and __main__.py, what is "
    "published",
    "tests/vmsizes/test_init.py": "the vmsizes package as a whole (its __init__ and its dependencies)",
    "tests/azroles/test_init.py": "azroles/__init__.py, the whole package",
    "tests/azml_gpu/test_init.py": "azml_gpu/__init__.py, the checkout's alias package as a whole",
}


def mapped_files() -> list[Path]:
    return sorted(
        p for p in TESTS.rglob("test_*.py") if p.relative_to(TESTS).parts[0] not in NOT_MAPPED | {"program"}
    )


def subject(test: Path, root: Path = ROOT) -> Path | None:
    """The module a test file tests, or None when there is none."""
    rel = test.relative_to(root / "tests")
    name = rel.name[len("test_") : -len(".py")]
    folder = root.joinpath(*rel.parts[:-1])
    for candidate in (folder / f"{name}.py", folder / name / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@pytest.mark.parametrize("test", mapped_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_test_file_names_the_module_it_tests(test: Path) -> None:
    rel = str(test.relative_to(ROOT))
    if rel in OWN_SUBJECT:
        return
    assert subject(test) is not None, (
        f"{rel} names no module: rename it test_<module>.py after the module it tests, move it to "
        "tests/integration/<topic>/ if it needs make test, or list it in OWN_SUBJECT with why"
    )


def test_the_exceptions_exist() -> None:
    assert [p for p in OWN_SUBJECT if not (ROOT / p).is_file()] == []


def test_every_test_folder_is_a_package() -> None:
    """A folder of test modules is a package, so two folders may hold test files of the same name (pytest's
    rootdir-relative module names). A folder of other Python files (a user's trainer a test runs as a script)
    need not be one."""
    tested = {p.parent for p in [*TESTS.rglob("test_*.py"), *TESTS.rglob("conftest.py")]}
    folders = tested - {TESTS / "fixtures"}
    folders = {f for f in folders if "fixtures" not in f.relative_to(TESTS).parts}
    assert sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").is_file()) == []


def test_the_map_finds_modules_and_packages_and_refuses_a_stray_name(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "mod.py").write_text("")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    (tmp_path / "tests" / "pkg").mkdir(parents=True)
    found = {
        name: subject(tmp_path / "tests" / "pkg" / name, tmp_path)
        for name in ("test_mod.py", "test_sub.py", "test_mod_edge_cases.py")
    }
    assert found == {
        "test_mod.py": tmp_path / "pkg" / "mod.py",
        "test_sub.py": tmp_path / "pkg" / "sub" / "__init__.py",
        "test_mod_edge_cases.py": None,
    }
