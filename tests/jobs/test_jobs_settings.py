"""Job settings (jobs/settings.py): per-size defaults in the rendered YAML and in what azure-ai-ml sends,
overrides with --set, and bad --set values refused with exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from azure.ai.ml import load_job

from jobs.cli import main
from jobs.settings import DEFAULT_TIMEOUT_S, defaults

FIXTURE = str(Path(__file__).parent / "fixtures" / "outputs-prod.json")


def _render(tmp_path: Path, *argv: str) -> tuple[dict, dict]:
    out = tmp_path / "job.yml"
    assert main(["render", *argv, "--outputs", FIXTURE, "--out", str(out)]) == 0
    rest = load_job(out)._to_job()._to_rest_object().as_dict()["properties"]
    return yaml.safe_load(out.read_text()), rest


def test_h100_v5_job_gets_the_azure_hpc_image_nccl_settings_timeout_and_shm(tmp_path):
    data, rest = _render(tmp_path, "train", "--cluster", "h100-x4", "--run-name", "s1")
    env = data["environment_variables"]
    # azhpc-images ndv5.sh's /etc/nccl.conf, minus NCCL_TOPO_FILE (a host path the job container lacks).
    assert "NCCL_TOPO_FILE" not in env
    assert env["NCCL_IB_PCI_RELAXED_ORDERING"] == "1" and env["NCCL_IGNORE_CPU_AFFINITY"] == "1"
    assert env["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "3" and env["NCCL_DEBUG"] == "INFO"
    assert "DATASET_UNMOUNT_TIMEOUT_SECONDS" in env  # jobs/unmount.py, kept
    assert data["limits"]["timeout"] == DEFAULT_TIMEOUT_S["train"]
    assert data["resources"]["shm_size"] == "950g"  # half of the catalog's 1900 GiB
    # and it is what the SDK sends
    assert rest["limits"]["timeout"] == "PT168H" or rest["limits"]["timeout"].startswith("P7D")
    assert rest["resources"]["shmSize"] == "950g"
    assert rest["environmentVariables"]["NCCL_IGNORE_CPU_AFFINITY"] == "1"


def test_overrides_replace_remove_and_add(tmp_path):
    data, _ = _render(
        tmp_path,
        "smoke",
        "--cluster",
        "h100-x4",
        "--set",
        "timeout=600",
        "--set",
        "shm_size=64g",
        "--set",
        "env.NCCL_IGNORE_CPU_AFFINITY=",
        "--set",
        "env.NCCL_DEBUG=WARN",
        "--set",
        "env.NCCL_IB_TIMEOUT=22",
    )
    env = data["environment_variables"]
    assert "NCCL_IGNORE_CPU_AFFINITY" not in env and env["NCCL_DEBUG"] == "WARN"
    assert env["NCCL_IB_TIMEOUT"] == "22"
    assert data["limits"]["timeout"] == 600 and data["resources"]["shm_size"] == "64g"


@pytest.mark.parametrize(
    "size",
    [
        "Standard_ND96asr_v4",
        "Standard_ND96amsr_A100_v4",
        "Standard_ND96isr_H100_v5",
        "Standard_ND96isr_H200_v5",
    ],
)
def test_azhpc_images_nccl_conf_per_size(size):
    """azhpc-images (8e9d055f) setup_sku_customizations.sh: standard_nd*v4 -> ndv4.sh,
    standard_nd96is*_h[1-2]00_v5 -> ndv5.sh; both write NCCL_IB_PCI_RELAXED_ORDERING=1 and
    NCCL_IGNORE_CPU_AFFINITY=1 (and a host-path
    NCCL_TOPO_FILE a job container does not have, so not set)."""
    env = defaults("train", size).env
    assert env["NCCL_IB_PCI_RELAXED_ORDERING"] == "1"
    assert env["NCCL_IGNORE_CPU_AFFINITY"] == "1"
    assert "NCCL_TOPO_FILE" not in env
    assert env["NCCL_SOCKET_IFNAME"] == "eth0" and env["UCX_IB_PCI_RELAXED_ORDERING"] == "on"


def test_size_without_published_settings_gets_only_the_generic_ones():
    s = defaults("smoke", "Standard_NC80adis_H100_v5")
    assert s.env == {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "3"}
    assert s.timeout_s == DEFAULT_TIMEOUT_S["smoke"]


@pytest.mark.parametrize(
    "item, named",
    [
        ("shm_size=lots", "shm_size"),
        ("timeout=1h", "timeout"),
        ("gpu=8", "gpu"),
        ("env.1X=2", "env.1X"),
        ("noequals", "noequals"),
    ],
)
def test_bad_set_is_exit_2_naming_it(tmp_path, capsys, item, named):
    code = main(
        [
            "render",
            "smoke",
            "--cluster",
            "h100-x4",
            "--outputs",
            FIXTURE,
            "--out",
            str(tmp_path / "x.yml"),
            "--set",
            item,
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and f"--set {named}" in err.replace("'", ""), err
    assert not (tmp_path / "x.yml").exists()
