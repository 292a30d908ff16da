"""The installable package (pyproject.toml): a wheel built from the checkout, installed into a fresh
virtualenv under a temporary folder (never the shared one), runs its console scripts and `python -m jobs`
from any folder, with the job scripts (jobs/payload/) and the catalog's data inside the package; it holds the
gate with its offline azure-native provider and the policy pack, and no test double; the installed gate passes
a copy of the dev stack with a Pulumi CLI on PATH.

The fresh virtualenv gets the already-installed dependencies through a `.pth` line naming this interpreter's
site-packages (read only), so the test needs no package index beyond the build backend pyproject.toml pins."""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[3]
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
        "stackconfig/cli.py",
        "azroles/__init__.py",
        "components/gpu_cluster.py",
    ):
        assert path in names, path
    # the product only: no test double, no tests, no benchmarks, no virtualenv or vendored wheel of the pack
    assert not [n for n in names if n.startswith(("tests/", "bench/", "doubles/", "localml/", "engine/"))]
    assert not [n for n in names if "/.venv/" in n or n.startswith("policies/vendor/")]
    tops = {n.split("/")[0] for n in names if not n.startswith("azml_gpu-")}
    assert tops == {"azroles", "components", "jobs", "policies", "preflight", "stackconfig", "vmsizes"}
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert sorted(line.split(" = ")[0] for line in text.splitlines() if " = " in line) == sorted(SCRIPTS)


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
    r = _run(venv, [venv / "bin" / "python", "-m", "jobs", "plan", *plan, "--json"], tmp_path)
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
    imported = _run(venv, [venv / "bin" / "python", "-c", "import jobs; print(jobs.__file__)"], tmp_path)
    assert Path(imported.stdout.strip()).is_relative_to(venv)


def test_the_installed_gate_passes_a_copied_dev_stack_with_a_cli_on_path(venv: Path, tmp_path: Path) -> None:
    """A team's folder: the program, its stack file and policy config, nothing else of this repository; the
    gate, its provider and the pack come from the installed wheel, the Pulumi CLI from PATH."""
    from preflight import pulumicli

    folder = tmp_path / "team"
    (folder / "policies" / "config").mkdir(parents=True)
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml", "__main__.py", "policies/config/dev.json"):
        shutil.copy(ROOT / name, folder / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pulumi").symlink_to(pulumicli.find().path)  # what `pulumi` on a user's PATH is
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", pulumicli.ENV_CLI)}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    env["AZML_ENGINE_CACHE"] = str(tmp_path / "no-cache")  # not the builder's: only the CLI on PATH
    r = subprocess.run(
        [venv / "bin" / "azml-gpu-preflight", "dev", "--json"],
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
    folder = tmp_path / "team"
    folder.mkdir()
    for name in ("Pulumi.yaml", "Pulumi.dev.yaml", "__main__.py"):
        shutil.copy(ROOT / name, folder / name)
    (folder / "policies" / "config").mkdir(parents=True)
    shutil.copy(ROOT / "policies/config/dev.json", folder / "policies/config/dev.json")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "AZML_ENGINE_CACHE": str(tmp_path / "none")}
    r = subprocess.run(
        [venv / "bin" / "azml-gpu-preflight", "dev", "--json"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    [error] = json.loads(r.stdout)["errors"]
    assert error.startswith("no Pulumi CLI to run (no `pulumi` on PATH): install the Pulumi CLI 3.274.1")
    assert "Traceback" not in r.stderr
