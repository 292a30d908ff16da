"""packaging/azml_gpu_build.py, the wheel's build backend: what it changes in a module (the imports of
this project's packages, the `python -m` hints), what it keeps byte for byte, the pack's installed manifest,
and the staged tree as a whole, imported in a fresh interpreter with no repository package on its path (the
wheel itself, installed and run from another folder: tests/integration/package/test_wheel.py)."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("azml_gpu_build", ROOT / "packaging" / "azml_gpu_build.py")
assert _spec is not None and _spec.loader is not None
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

OURS = ("azroles", "components", "jobs", "policies", "preflight", "stackconfig", "vmsizes")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import vmsizes\n", "import azml_gpu.vmsizes as vmsizes\n"),
        ("import azroles as roles, json\n", "import azml_gpu.azroles as roles, json\n"),
        ("import json, azroles\n", "import json, azml_gpu.azroles as azroles\n"),
        ("from stackconfig.cli import prog_name\n", "from azml_gpu.stackconfig.cli import prog_name\n"),
        ("from  jobs  import cli\n", "from  azml_gpu.jobs  import cli\n"),
        (
            "from components import (\n    A,  # one\n    B,\n)\n",
            "from azml_gpu.components import (\n    A,  # one\n    B,\n)\n",
        ),
        (
            "def f():\n    if x:\n        from preflight.provider import model\n",
            "def f():\n    if x:\n        from azml_gpu.preflight.provider import model\n",
        ),
        # a name before the import on the same line, wider in UTF-8 than in characters (ast counts bytes)
        ('s = "é€"; from policies import registry\n', 's = "é€"; from azml_gpu.policies import registry\n'),
        ("from \\\n    vmsizes import quota\n", "from \\\n    azml_gpu.vmsizes import quota\n"),
    ],
)
def test_imports_of_the_projects_packages_get_the_installed_name(source: str, expected: str) -> None:
    assert build.rewrite_imports(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "from . import registry\n",
        "from .commands import plan\n",
        "from ..provider import model\n",
        "import jobsx\nfrom componentsx import y\nimport pulumi_azure_native\n",
        "import doubles.localml\nfrom tests.x import y\n",
        '"""from components import A"""\n# import vmsizes\ntext = "import jobs"\n',
    ],
)
def test_everything_else_is_kept_byte_for_byte(source: str) -> None:
    assert build.rewrite_imports(source) == source
    assert build.rewrite(source) == source


def test_a_dotted_import_without_as_is_refused_naming_the_fix() -> None:
    with pytest.raises(ValueError, match=r"line 2: `import vmsizes.quota` binds `azml_gpu` once installed; "
                       r"write `from vmsizes import quota`"):  # fmt: skip
        build.rewrite_imports("import os\nimport vmsizes.quota\n")
    assert build.rewrite_imports("import vmsizes.quota as q\n") == "import azml_gpu.vmsizes.quota as q\n"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('h = "run `python -m jobs plan --json`"\n', 'h = "run `python -m azml_gpu.jobs plan --json`"\n'),
        ("h = f'python3 -m preflight.stacks {x}'\n", "h = f'python3 -m azml_gpu.preflight.stacks {x}'\n"),
        ('"""Run `python -m preflight dev`."""\n', '"""Run `python -m azml_gpu.preflight dev`."""\n'),
        ("x = 1  # python -m jobs local\n", "x = 1  # python -m azml_gpu.jobs local\n"),
        ('h = "python  -m  stackconfig"\n', 'h = "python  -m  azml_gpu.stackconfig"\n'),
    ],
)
def test_commands_printed_to_users_name_the_installed_module(source: str, expected: str) -> None:
    assert build.rewrite_hints(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        'h = "python -m doubles.localml serve"\n',
        'h = "python -m jobsx"\n',
        'h = "python -c jobs"\n',
        "python = m = jobs = 1\n",
        'h = "pythonx -m jobs"\n',
    ],
)
def test_other_commands_and_code_are_not_hints(source: str) -> None:
    assert build.rewrite_hints(source) == source


def test_the_installed_manifest_runs_on_the_interpreter_azml_gpu_is_installed_in() -> None:
    text = (ROOT / "policies" / "PulumiPolicy.yaml").read_text()
    repo = yaml.safe_load(text)
    installed = yaml.safe_load(build.installed_manifest(text))
    assert repo["runtime"]["options"]["virtualenv"] == ".venv"  # `pulumi policy publish` from policies/
    assert installed["runtime"] == {"name": "python", "options": {"toolchain": "pip"}}
    assert {k: v for k, v in installed.items() if k != "runtime"} == {
        k: v for k, v in repo.items() if k != "runtime"
    }


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build.stage(tmp_path_factory.mktemp("staged"))


def test_the_staged_tree_has_one_top_level_package(staged: Path) -> None:
    assert sorted(p.name for p in staged.iterdir()) == sorted(
        ["azml_gpu", "pyproject.toml", "README.md", "LICENSE", "requirements.txt"]
    )
    assert sorted(p.name for p in (staged / "azml_gpu").iterdir()) == sorted([*OURS, "__init__.py"])
    assert not [p for p in staged.rglob("*") if p.name in (".venv", "vendor", "__pycache__", "node_modules")]
    for name in ("PulumiPolicy.yaml", "config/dev.json", "__main__.py", "registry.py"):
        assert (staged / "azml_gpu" / "policies" / name).is_file(), name
    assert "virtualenv" not in yaml.safe_load((staged / "azml_gpu/policies/PulumiPolicy.yaml").read_text())


def test_the_staged_pyproject_is_plain_setuptools_and_names_the_installed_modules(staged: Path) -> None:
    import tomllib

    project = tomllib.loads((staged / "pyproject.toml").read_text())
    repo = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert repo["build-system"]["build-backend"] == "azml_gpu_build"
    assert project["build-system"] == {
        "requires": ["setuptools==80.9.0"],
        "build-backend": "setuptools.build_meta",
    }
    assert project["project"] == repo["project"]
    for target in project["project"]["scripts"].values():
        module = target.split(":")[0]
        assert module.startswith("azml_gpu."), target
        assert (staged / Path(*module.split("."))).with_suffix(".py").is_file(), target


def test_no_staged_module_imports_a_bare_package_and_the_rest_is_unchanged(staged: Path) -> None:
    unchanged = 0
    for path in (staged / "azml_gpu").rglob("*.py"):
        rel = path.relative_to(staged / "azml_gpu")
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            assert not [n for n in names if n.split(".")[0] in OURS], (rel, node.lineno)
        if rel.parts == ("__init__.py",):
            continue
        source = (ROOT / rel).read_text()
        if source == path.read_text():
            unchanged += 1
        else:  # only the import lines and hints differ: the same lines, the same count
            assert len(source.splitlines()) == len(path.read_text().splitlines()), rel
    assert unchanged > 20  # e.g. jobs/payload/*.py, the provider's modules without imports of ours


def test_the_staged_packages_import_and_run_with_no_repository_package_on_the_path(
    staged: Path, tmp_path: Path
) -> None:
    """A fresh interpreter in another folder, the staged tree first on its path: the commands' parsers build
    (jobs' COMMANDS, preflight, stackconfig), stackconfig's lazy names and the catalog's data load, the pack
    is found under azml_gpu, and no top-level package of the repository is imported or importable."""
    code = textwrap.dedent(
        """
        import importlib.util, json, sys
        from azml_gpu.jobs.cli import build_parser
        from azml_gpu.preflight import layout, __main__ as gate_main
        from azml_gpu.stackconfig import validate
        from azml_gpu.vmsizes import lookup, health
        build_parser(); gate_main.parser()
        ours = OURS
        print(json.dumps({
            "size": lookup("standard_nd96isr_h100_v5").name,
            "health": health.levels("Standard_ND96isr_H100_v5") is not None,
            "validate": validate.__module__,
            "prefix": layout.PREFIX,
            "pack": str(layout.pack_folder()),
            "provider": layout.own("preflight.provider"),
            "checkout": layout.checkout(),
            "folder": str(layout.program_folder()),
            "bare": sorted(m for m in sys.modules if m.split(".")[0] in ours),
            "importable": [n for n in ours if importlib.util.find_spec(n) is not None],
        }))
        """
    ).replace("OURS", repr(OURS))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(staged)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import json

    found = json.loads(r.stdout)
    assert found["size"] == "Standard_ND96isr_H100_v5" and found["health"] is True
    assert found["validate"] == "azml_gpu.stackconfig.validation"
    assert found["prefix"] == "azml_gpu."
    assert found["pack"] == str(staged / "azml_gpu" / "policies")
    assert found["provider"] == "azml_gpu.preflight.provider"
    assert found["checkout"] is None and found["folder"] == str(tmp_path.resolve())  # never site-packages
    assert found["bare"] == [] and found["importable"] == []


def test_an_editable_install_is_refused_with_the_reason() -> None:
    with pytest.raises(build.EditableUnsupported, match=r"no editable install: .* `pip install \.` instead"):
        build.build_editable("/nonexistent")


def test_the_source_distribution_is_the_staged_tree_as_a_plain_setuptools_project(tmp_path: Path) -> None:
    import tarfile
    import tomllib

    here = Path.cwd()
    name = build.build_sdist(str(tmp_path))
    assert Path.cwd() == here  # the build ran in the staged tree and came back
    with tarfile.open(tmp_path / name) as archive:
        names = archive.getnames()
        top = f"azml_gpu-{tomllib.loads((ROOT / 'pyproject.toml').read_text())['project']['version']}"
        inside = {n.removeprefix(f"{top}/").split("/")[0] for n in names if n.startswith(f"{top}/")}
        pyproject = tomllib.loads(archive.extractfile(f"{top}/pyproject.toml").read().decode())  # type: ignore[union-attr]
    assert not inside & set(OURS)  # no bare package: all under azml_gpu/
    assert {"azml_gpu", "pyproject.toml", "README.md", "LICENSE", "requirements.txt"} <= inside
    assert f"{top}/azml_gpu/policies/PulumiPolicy.yaml" in names
    assert pyproject["build-system"]["build-backend"] == "setuptools.build_meta"
