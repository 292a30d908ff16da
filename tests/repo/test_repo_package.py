"""The installable package (pyproject.toml): a wheel built from the checkout, installed into a fresh
virtualenv under a temporary folder (never the shared one), runs its console scripts and `python -m jobs`
from any folder, with the job scripts (jobs/src/) and the catalog's data inside the package.

The fresh virtualenv gets the already-installed dependencies through a `.pth` line naming this interpreter's
site-packages (read only), so the test needs no package index beyond the build backend pyproject.toml pins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.slow
SCRIPTS = ("azml-gpu-jobs", "azml-gpu-localml", "azml-gpu-preflight", "azml-gpu-stackconfig")


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
    (found,) = out.glob("azml_gpu-0.1.0-*.whl")
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
        "jobs/src/smoke.py",
        "jobs/src/train.py",
        "vmsizes/data/sizes.yaml",
        "vmsizes/data/health.yaml",
        "preflight/provider/azure_specs/index.json",
        "stackconfig/cli.py",
        "doubles/localml/package-lock.json",
        "azroles/__init__.py",
        "components/gpu_cluster.py",
    ):
        assert path in names, path
    assert not any(n.startswith(("tests/", "bench/")) for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert all(f"{s} = " in text for s in SCRIPTS)


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
    r = _run(venv, [venv / "bin" / "azml-gpu-localml", "serve", "--bogus", "--json"], tmp_path)
    assert r.returncode == 2 and json.loads(r.stdout)["exit_code"] == 2


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
