"""azml_gpu/__init__.py, the checkout's alias package: code written against the wheel's names
(examples/team-gpu) runs here on the very modules the repository imports, each loaded once."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("azroles", "components", "jobs", "policies", "preflight", "stackconfig", "vmsizes")


def test_an_installed_name_is_the_same_module_as_the_repositorys() -> None:
    from azml_gpu.components import GpuCluster
    from azml_gpu.components import gpu_cluster as aliased

    import components
    import components.gpu_cluster

    assert GpuCluster is components.GpuCluster
    assert aliased is components.gpu_cluster
    assert sys.modules["azml_gpu.components"] is components
    from azml_gpu import vmsizes as by_attribute

    assert by_attribute is importlib.import_module("vmsizes")
    assert importlib.import_module("azml_gpu.stackconfig.loader") is importlib.import_module(
        "stackconfig.loader"
    )


def test_a_module_imported_first_under_the_installed_name_is_loaded_once(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "import azml_gpu.vmsizes.quota as q\n"
        "import vmsizes.quota\n"
        "assert q is vmsizes.quota and q.__name__ == 'vmsizes.quota'\n"
        "print(sorted(n for n, m in sys.modules.items() if m is q))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "['azml_gpu.vmsizes.quota', 'vmsizes.quota']"


@pytest.mark.parametrize("name", ["azml_gpu.doubles", "azml_gpu.tests", "azml_gpu.nope"])
def test_only_the_products_packages_have_an_installed_name(name: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(name)


def test_the_alias_lists_the_wheels_packages() -> None:
    import azml_gpu

    spec = importlib.util.spec_from_file_location("build", ROOT / "packaging" / "azml_gpu_build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    assert azml_gpu.PACKAGES == build.PACKAGES == PRODUCT


def test_the_repositorys_own_code_never_imports_it() -> None:
    found = []
    for package in [*PRODUCT, "doubles"]:
        for path in (ROOT / package).rglob("*.py"):
            if ".venv" in path.parts or "node_modules" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.level == 0:
                    names = [node.module or ""]
                found += [
                    f"{path.relative_to(ROOT)}:{node.lineno}" for n in names if n.split(".")[0] == "azml_gpu"
                ]
    assert found == []
