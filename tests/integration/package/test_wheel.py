"""The installable package (pyproject.toml, built by packaging/azml_gpu_build.py): a wheel built from the
checkout, installed into a fresh virtualenv under a temporary folder (never the shared one). It installs one
top-level name, `azml_gpu` (no `components`, `jobs`, ... of its own in site-packages), runs its console
scripts and `python -m azml_gpu.jobs` from any folder against that folder's files, with the job scripts
(jobs/payload/) and the catalog's data inside the package; it holds the gate with its offline azure-native
provider and the policy pack whole (PulumiPolicy.yaml, config/), and no test double; the installed gate
passes a copy of the dev stack with a Pulumi CLI on PATH, and `jobs render` builds a job from the outputs it
exports there.

The fresh virtualenv gets the already-installed dependencies through a `.pth` line naming this interpreter's
site-packages (read only), so the test needs no package index beyond the build backend pyproject.toml pins."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
PRODUCT = ("azroles", "components", "jobs", "policies", "preflight", "stackconfig", "vmsizes")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
SCRIPTS = ("azml-gpu-jobs", "azml-gpu-preflight", "azml-gpu-stackconfig")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "-w",
            out,
            ROOT,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    (found,) = out.glob(f"azml_gpu-{VERSION}-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", home], check=True, timeout=120)
    site = next((home / "lib").glob("python3*/site-packages"))
    (site / "shared-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    r = subprocess.run(
        [
            home / "bin" / "python",
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            wheel,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return home


def _run(venv: Path, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_wheel_holds_the_packages_and_their_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in (
        "__init__.py",
        "jobs/cli.py",
        "jobs/payload/smoke.py",
        "jobs/payload/train.py",
        "vmsizes/data/sizes.yaml",
        "vmsizes/data/health.yaml",
        "preflight/provider/azure_specs/index.json",
        "preflight/provider/azure_specs/machinelearningservices/resource-manager/Microsoft.MachineLearningServices"
        "/stable/2025-12-01/machineLearningServices.json",
        "preflight/provider/server.py",
        "policies/PulumiPolicy.yaml",
        "policies/__main__.py",
        "policies/registry.py",
        *(f"policies/config/{p.name}" for p in (ROOT / "policies" / "config").glob("*.json")),
        "stackconfig/cli.py",
        "azroles/__init__.py",
        "components/gpu_cluster.py",
    ):
        assert f"azml_gpu/{path}" in names, path
    # the product only: no test double, no tests, no benchmarks, no virtualenv or vendored wheel of the pack,
    # nor the checkout's alias package (azml_gpu/__init__.py is the wheel's own)
    inside = {n.removeprefix("azml_gpu/") for n in names}
    assert not [n for n in inside if n.startswith(("tests/", "bench/", "doubles/", "localml/", "engine/"))]
    assert not [n for n in inside if "/.venv/" in n or n.startswith("policies/vendor/")]
    assert "policies/requirements.txt" not in inside  # it names the vendored catalog wheel: the repository's
    # one top-level name, and its metadata
    assert {n.split("/")[0] for n in names} == {"azml_gpu", f"azml_gpu-{VERSION}.dist-info"}
    assert "_Alias" not in zipfile.ZipFile(wheel).read("azml_gpu/__init__.py").decode()
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    scripts = dict(line.split(" = ") for line in text.splitlines() if " = " in line)
    assert sorted(scripts) == sorted(SCRIPTS)
    assert all(target.startswith("azml_gpu.") for target in scripts.values()), scripts
    manifest = yaml.safe_load(zipfile.ZipFile(wheel).read("azml_gpu/policies/PulumiPolicy.yaml"))
    assert manifest["runtime"] == {
        "name": "python",
        "options": {"toolchain": "pip"},
    }  # no .venv in site-packages


def test_the_wheel_names_its_license_and_carries_the_text(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    info = f"azml_gpu-{VERSION}.dist-info"
    metadata = archive.read(f"{info}/METADATA").decode()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert "License-File: LICENSE" in metadata.splitlines()
    assert "Apache License" in archive.read(f"{info}/licenses/LICENSE").decode()


def test_console_scripts_run_from_another_folder(venv: Path, tmp_path: Path) -> None:
    plan = [
        "--tokens",
        "2e9",
        "--tokens-per-gpu-s",
        "8200",
        "--gpus",
        "16",
        "--size",
        "Standard_ND96isr_H100_v5",
    ]
    r = _run(venv, [venv / "bin" / "azml-gpu-jobs", "plan", *plan, "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["hours"] == pytest.approx(4.98, abs=0.01)
    r = _run(venv, [venv / "bin" / "python", "-m", "azml_gpu.jobs", "plan", *plan, "--json"], tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["hours"] == pytest.approx(4.98, abs=0.01)
    r = _run(venv, [venv / "bin" / "azml-gpu-stackconfig", str(ROOT / "Pulumi.dev.yaml"), "--json"], tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["ok"] is True
    assert not (venv / "bin" / "azml-gpu-localml").exists()


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_console_scripts_usage_names_itself(venv: Path, tmp_path: Path, script: str) -> None:
    # Not `python -m jobs`: a user who typed azml-gpu-jobs is told to type azml-gpu-jobs.
    r = _run(venv, [venv / "bin" / script, "--help"], tmp_path)
    assert r.returncode == 0 and r.stdout.startswith(f"usage: {script} "), r.stdout[:200]


def test_the_installed_package_runs_a_job_script_from_its_own_jobs_src(venv: Path, tmp_path: Path) -> None:
    r = _run(
        venv,
        [
            venv / "bin" / "azml-gpu-jobs",
            "local",
            "smoke",
            "--processes-per-node",
            "2",
            "--logs",
            str(tmp_path / "logs"),
            "--json",
            "--",
            "--max-bytes",
            "64K",
            "--expect-world-size",
            "2",
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["exit_code"] == 0
    code = "import azml_gpu.jobs as j; print(j.__file__)"
    imported = _run(venv, [venv / "bin" / "python", "-c", code], tmp_path)
    assert Path(imported.stdout.strip()).is_relative_to(venv)


def _site(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def test_the_wheel_installs_one_top_level_name(venv: Path, tmp_path: Path) -> None:
    """`import components` fails in the virtualenv (nothing generic collides with a team's packages) while
    `import azml_gpu.components` works; what pip installed is azml_gpu/ and its dist-info, and the scripts."""
    record = (_site(venv) / f"azml_gpu-{VERSION}.dist-info" / "RECORD").read_text().splitlines()
    installed = {line.split(",")[0].split("/")[0] for line in record}
    assert installed == {"azml_gpu", f"azml_gpu-{VERSION}.dist-info", ".."}  # `..`: bin/azml-gpu-*
    code = (
        "import importlib.util, json, sys\n"
        "import azml_gpu.components, azml_gpu.policies, azml_gpu.jobs, azml_gpu.preflight.gate\n"
        f"ours = {PRODUCT!r}\n"
        "print(json.dumps({'found': [n for n in ours if importlib.util.find_spec(n)],\n"
        "  'loaded': sorted(m for m in sys.modules if m.split('.')[0] in ours),\n"
        "  'components': azml_gpu.components.__file__}))\n"
    )
    r = _run(venv, [venv / "bin" / "python", "-c", code], tmp_path)
    assert r.returncode == 0, r.stderr
    document = json.loads(r.stdout)
    assert document["found"] == [] and document["loaded"] == []
    assert Path(document["components"]).is_relative_to(_site(venv) / "azml_gpu")
    r = _run(venv, [venv / "bin" / "python", "-c", "import components"], tmp_path)
    assert r.returncode == 1 and "ModuleNotFoundError: No module named 'components'" in r.stderr
    # every command printed to a user names a module that exists here
    hints = [
        str(p.relative_to(_site(venv)))
        for p in (_site(venv) / "azml_gpu").rglob("*.py")
        if any(f"python -m {name}" in p.read_text() for name in PRODUCT)
    ]
    assert hints == []


def test_the_pack_ships_whole_and_pack_path_names_it(venv: Path, tmp_path: Path) -> None:
    r = _run(venv, [venv / "bin" / "azml-gpu-preflight", "pack-path", "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    document = json.loads(r.stdout)
    pack = _site(venv) / "azml_gpu" / "policies"
    assert document == {"path": str(pack), "manifest": str(pack / "PulumiPolicy.yaml"), "installed": True}
    assert sorted(p.name for p in (pack / "config").glob("*.json")) == sorted(
        p.name for p in (ROOT / "policies" / "config").glob("*.json")
    )
    # the pack's entry point, as the Pulumi CLI runs it (runpy on the folder), imports its installed modules
    code = (
        "import runpy, sys, pulumi_policy\n"
        "pulumi_policy.PolicyPack = lambda *a, **k: None  # no engine to serve: the imports and the build\n"
        f"runpy.run_path({str(pack)!r}, run_name='__main__')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('policies', 'azml_gpu.policies.'))))\n"
    )
    r = _run(venv, [venv / "bin" / "python", "-c", code], tmp_path)
    assert r.returncode == 0, r.stderr
    loaded = eval(r.stdout.strip().splitlines()[-1])  # noqa: S307 - our own printed list
    assert "azml_gpu.policies.registry" in loaded and "policies" not in loaded


def _team_folder(tmp_path: Path, *, policy_config: bool = True) -> Path:
    """A team's stack folder: this repository's program as a team copies it (its imports of the installed
    package, as the wheel's build writes them), the dev stack file and, unless told, its policy config."""
    spec = importlib.util.spec_from_file_location("azml_gpu_build", ROOT / "packaging" / "azml_gpu_build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    folder = tmp_path / "team"
    folder.mkdir()
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml"):
        shutil.copy(ROOT / name, folder / name)
    (folder / "__main__.py").write_text(build.rewrite_imports((ROOT / "__main__.py").read_text()))
    assert "from azml_gpu.components import" in (folder / "__main__.py").read_text()
    if policy_config:
        (folder / "policies" / "config").mkdir(parents=True)
        shutil.copy(ROOT / "policies/config/dev.json", folder / "policies/config/dev.json")
    return folder


def test_the_stack_readers_read_the_folder_they_run_in(venv: Path, tmp_path: Path) -> None:
    folder = _team_folder(tmp_path)
    (folder / "Pulumi.staging.yaml").write_text((folder / "Pulumi.dev.yaml").read_text())
    r = _run(
        venv, [venv / "bin" / "azml-gpu-stackconfig", "staging", "--json"], folder
    )  # ./Pulumi.staging.yaml
    assert r.returncode == 0 and json.loads(r.stdout)["ok"] is True, r.stdout + r.stderr
    r = _run(venv, [venv / "bin" / "python", "-m", "azml_gpu.preflight.stacks"], folder)
    assert r.returncode == 0 and json.loads(r.stdout) == ["dev", "staging"], r.stdout + r.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _run(venv, [venv / "bin" / "python", "-m", "azml_gpu.preflight.stacks"], empty)
    assert r.returncode == 2 and "site-packages" not in r.stderr, r.stderr
    assert (
        r.stderr
        == f"preflight.stacks: --root: no Pulumi.yaml in {empty.resolve()}; give the program's folder\n"
    )


def test_init_config_writes_into_the_folder_it_runs_in(venv: Path, tmp_path: Path) -> None:
    folder = _team_folder(tmp_path, policy_config=False)
    shipped = sorted((_site(venv) / "azml_gpu" / "policies" / "config").iterdir())
    r = _run(venv, [venv / "bin" / "azml-gpu-preflight", "init-config", "dev", "--json"], folder)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["written"] == str(folder / "policies" / "config" / "dev.json")
    assert json.loads((folder / "policies" / "config" / "dev.json").read_text())  # a policy config
    assert sorted((_site(venv) / "azml_gpu" / "policies" / "config").iterdir()) == shipped
    # a folder without a program: named, never site-packages
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _run(venv, [venv / "bin" / "azml-gpu-preflight", "init-config", "dev", "--json"], empty)
    assert r.returncode == 2, r.stdout + r.stderr
    assert json.loads(r.stdout)["errors"] == [
        f"STACK 'dev': no Pulumi.dev.yaml in {empty}; use one of: (none) (or run it in the program's folder)"
    ]
    assert "Traceback" not in r.stderr and "site-packages" not in r.stdout


def test_the_installed_gate_passes_a_copied_dev_stack_with_a_cli_on_path(venv: Path, tmp_path: Path) -> None:
    """A team's folder: the program, its stack file and policy config, nothing else of this repository; the
    gate, its provider and the pack come from the installed wheel, the Pulumi CLI from PATH."""
    from preflight import pulumicli

    folder = _team_folder(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pulumi").symlink_to(pulumicli.find().path)  # what `pulumi` on a user's PATH is
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", pulumicli.ENV_CLI)}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    env["AZML_ENGINE_CACHE"] = str(tmp_path / "no-cache")  # not the builder's: only the CLI on PATH
    r = subprocess.run(
        [venv / "bin" / "azml-gpu-preflight", "dev", "--json", "--outputs-file", "dev-outputs.json"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    document = json.loads(r.stdout)
    assert document["engine"]["source"] == "PATH" and document["engine"]["path"] == str(bin_dir / "pulumi")
    assert document["summary"]["evaluations"] == {"first-deploy": 0, "update": 0}
    assert document["policy_config"]["file"] == str(folder / "policies" / "config" / "dev.json")
    urns = [r["urn"] for r in document["resources"]]
    assert urns and all(u.startswith("urn:pulumi:dev::azml-gpu::") for u in urns)
    # it ran the installed modules, not this checkout's
    assert "Traceback" not in r.stderr and str(ROOT) not in r.stderr
    # jobs render, in the same folder, from the outputs the gate exported there (relative paths: this folder)
    r = _run(
        venv,
        [venv / "bin" / "azml-gpu-jobs", "render", "smoke", "--outputs", "dev-outputs.json",
         "--cluster", "t4-dev", "--nodes", "1", "--out", "jobs/smoke.yml", "--json"],
        folder,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    [written] = json.loads(r.stdout)["jobs"]
    assert written["file"] == "jobs/smoke.yml" and (folder / "jobs" / "smoke.yml").is_file()
    job = yaml.safe_load((folder / "jobs" / "smoke.yml").read_text())
    assert job["compute"].endswith("t4-dev")
    # the installed job scripts, relative to the YAML file as `az ml job create -f` reads it
    code = (folder / "jobs" / job["code"]).resolve()
    assert code.is_relative_to(_site(venv).resolve() / "azml_gpu" / "jobs") and (code / "smoke.py").is_file()


def test_the_installed_gate_runs_the_example_program_with_program_dir(venv: Path, tmp_path: Path) -> None:
    """examples/team-gpu copied out of the checkout: a team's own program using the installed components,
    gated from another folder with `--program`, its own project name in the URNs."""
    from preflight import pulumicli

    program = tmp_path / "team-gpu"
    shutil.copytree(ROOT / "examples" / "team-gpu", program)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pulumi").symlink_to(pulumicli.find().path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", pulumicli.ENV_CLI)}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    env["AZML_ENGINE_CACHE"] = str(tmp_path / "no-cache")
    r = subprocess.run(
        [venv / "bin" / "azml-gpu-preflight", "dev", "--json", "--program", str(program)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    document = json.loads(r.stdout)
    assert document["summary"]["evaluations"] == {"first-deploy": 0, "update": 0}
    assert {u["urn"].split("::")[1] for u in document["resources"]} == {"team-gpu"}
    assert "Traceback" not in r.stderr and str(ROOT) not in r.stderr


def test_the_installed_gate_without_a_cli_says_how_to_install_one(venv: Path, tmp_path: Path) -> None:
    folder = _team_folder(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "AZML_ENGINE_CACHE": str(tmp_path / "none")}
    r = subprocess.run(
        [venv / "bin" / "azml-gpu-preflight", "dev", "--json"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    [error] = json.loads(r.stdout)["errors"]
    assert error.startswith("no Pulumi CLI to run (no `pulumi` on PATH): install the Pulumi CLI 3.274.1")
    assert "Traceback" not in r.stderr
