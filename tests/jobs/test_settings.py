"""Job settings (jobs/settings.py): per-size defaults in the rendered YAML and in what azure-ai-ml sends,
overrides with --set and bad --set values refused with exit 2, each level at and around its edge, and the
per-size NCCL settings pinned to what Azure publishes.

Published values: a job on a low-priority node lives at most 7 days
(learn.microsoft.com/azure/machine-learning/how-to-manage-quotas, docs/reference/azure-notes.md "Job lifetime
on a low-priority node"); Azure ML's default shm_size is 2g (MicrosoftDocs/azure-ai-docs
reference-yaml-job-command.md). The NCCL settings, from the sources:

- Azure/azhpc-images at 8e9d055fb9e1f7385da734969793861c447958a1 (2026-07-29):
  components/setup_sku_customizations.sh maps `standard_nd*v4` to ndv4.sh and `standard_nd96is*_h[1-2]00_v5`
  (ND H100 v5 and ND H200 v5) to ndv5.sh; each writes /etc/nccl.conf:
    ndv4.sh: NCCL_IB_PCI_RELAXED_ORDERING=1, NCCL_TOPO_FILE=/opt/microsoft/ndv4/topo.xml (a link to
             /opt/microsoft/ndv4-topo.xml), NCCL_IGNORE_CPU_AFFINITY=1 (there since the file's first version,
             2025-07-09, and in customizations/ndv4.sh before it since 2025-02-07, commit bf3b320e)
    ndv5.sh: NCCL_IB_PCI_RELAXED_ORDERING=1, NCCL_TOPO_FILE=/opt/microsoft/ndv5/topo.xml (a link to
             /opt/microsoft/ndv5-topo.xml), NCCL_IGNORE_CPU_AFFINITY=1
- Azure/azurehpc-health-checks at 0e0a1ac26a64b32ac4dd7632a529638505d3314a, customTests/
  azure_nccl_allreduce.nhc: mpirun -x UCX_IB_PCI_RELAXED_ORDERING=on -x CUDA_DEVICE_ORDER=PCI_BUS_ID
  -x NCCL_SOCKET_IFNAME=eth0 ...
- PyTorch torch_nccl_environment_variables: TORCH_NCCL_ASYNC_ERROR_HANDLING=3 tears the process down on a NCCL
  error (every GPU job)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from azure.ai.ml import load_job

from jobs import settings
from jobs.cli import main
from jobs.errors import UsageError
from jobs.settings import DEFAULT_TIMEOUT_S, JobSettings, apply, defaults

from .jobs_util import FIXTURES

FIXTURE = str(FIXTURES / "outputs-prod.json")


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


# --- each level at and around its edge --------------------------------------------------------------------


H100 = "Standard_ND96isr_H100_v5"


@pytest.mark.parametrize(
    ("kind", "seconds"), [("smoke", 3600), ("health", 3600), ("scaling", 7200), ("train", 7 * 24 * 3600)]
)
def test_each_kind_gets_its_time_limit(kind, seconds):
    assert defaults(kind, H100).timeout_s == seconds


def test_an_unknown_kind_has_no_time_limit():
    assert defaults("notebook", H100).timeout_s is None


@pytest.mark.parametrize(
    ("size", "shm"),
    [
        ("Standard_NV4as_v4", "7g"),  # 14 GiB: half
        ("Standard_NV6ads_A10_v5", "27g"),  # 55 GiB: half, rounded down
        ("Standard_NC24ads_A100_v4", "110g"),  # 220 GiB
        ("Standard_NV12hs_v3", "2g"),  # no memory figure in the catalog: Azure's default
        ("Standard_Nope_v9", "2g"),  # not a size name
    ],
)
def test_shared_memory_is_half_the_nodes_memory_and_never_below_azures_default(size, shm):
    assert defaults("train", size).shm_size == shm


def fresh() -> JobSettings:
    return JobSettings(3600, "2g", {"A": "1"})


@pytest.mark.parametrize(("value", "timeout"), [("0", None), ("1", 1), ("86400", 86400)])
def test_set_timeout_takes_whole_seconds_and_0_means_no_limit(value, timeout):
    s = apply(fresh(), [f"timeout={value}"])
    assert (s.timeout_s, s.overridden) == (timeout, ["timeout"])


@pytest.mark.parametrize("value", ["-1", "1.5", "1h", ""])
def test_set_timeout_refuses_anything_else(value):
    with pytest.raises(UsageError) as info:
        apply(fresh(), [f"timeout={value}"])
    assert str(info.value) == f"--set timeout={value}: whole seconds, e.g. --set timeout=86400 (0 = no limit)"


@pytest.mark.parametrize("value", ["1b", "64k", "512m", "64g", "1000g"])
def test_set_shm_size_takes_a_number_and_a_unit(value):
    assert apply(fresh(), [f"shm_size={value}"]).shm_size == value


@pytest.mark.parametrize("value", ["0g", "64", "64G", "64gb", "g", "-1g", "01g"])
def test_set_shm_size_refuses_others(value):
    with pytest.raises(UsageError) as info:
        apply(fresh(), [f"shm_size={value}"])
    assert str(info.value) == f"--set shm_size={value}: a number and a unit b, k, m or g, e.g. 64g"


def test_set_env_adds_replaces_and_removes():
    s = apply(fresh(), ["env.B=2", "env.A=3"])
    assert s.env == {"A": "3", "B": "2"} and s.overridden == ["env.B", "env.A"]
    assert apply(fresh(), ["env.A="]).env == {}
    assert apply(fresh(), ["env.ABSENT="]).env == {"A": "1"}  # removing what is not there is no error
    assert apply(fresh(), ["env.X=a=b"]).env["X"] == "a=b"  # only the first '=' splits


@pytest.mark.parametrize("name", ["1X", "A-B", "", "A B"])
def test_set_env_refuses_a_bad_variable_name(name):
    with pytest.raises(UsageError) as info:
        apply(fresh(), [f"env.{name}=1"])
    assert str(info.value) == f"--set env.{name}: not an environment variable name"


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (
            "timeout",
            "--set 'timeout': use KEY=VALUE, e.g. --set shm_size=64g or --set env.NCCL_IB_TIMEOUT=22",
        ),
        ("gpus=2", "--set gpus: unknown setting; use timeout, shm_size or env.NAME"),
    ],
)
def test_set_refuses_a_malformed_or_unknown_item(item, message):
    with pytest.raises(UsageError) as info:
        apply(fresh(), [item])
    assert str(info.value) == message


def test_a_later_set_wins_and_each_is_recorded():
    s = apply(fresh(), ["timeout=10", "timeout=20"])
    assert (s.timeout_s, s.overridden) == (20, ["timeout", "timeout"])
    assert s.to_json() == {
        "timeout_s": 20,
        "shm_size": "2g",
        "environment_variables": {"A": "1"},
        "overridden": ["timeout", "timeout"],
    }


# --- per-size NCCL settings, as the sources above publish them ------------------------------------------


HEALTH_CHECK = {
    "UCX_IB_PCI_RELAXED_ORDERING": "on",
    "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
    "NCCL_SOCKET_IFNAME": "eth0",
}


def env(size: str) -> dict[str, str]:
    return settings.defaults("train", size).env


@pytest.mark.parametrize(
    "size", ["Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5"]
)
def test_nd_sizes_get_relaxed_ordering_the_topology_file_and_the_health_check_env(size):
    got = env(size)
    assert got["NCCL_IB_PCI_RELAXED_ORDERING"] == "1"
    assert {k: got[k] for k in HEALTH_CHECK} == HEALTH_CHECK
    assert got["TORCH_NCCL_ASYNC_ERROR_HANDLING"] == "3"


def test_nd_h100_v5_ignores_cpu_affinity():
    assert env("Standard_ND96isr_H100_v5")["NCCL_IGNORE_CPU_AFFINITY"] == "1"


@pytest.mark.parametrize("size", ["Standard_ND96asr_v4", "Standard_ND96amsr_A100_v4"])
def test_nd_a100_v4_ignores_cpu_affinity_as_the_image_does(size):
    assert env(size).get("NCCL_IGNORE_CPU_AFFINITY") == "1"


def test_nd_h200_v5_gets_the_ndv5_settings():
    got = env("Standard_ND96isr_H200_v5")
    assert got.get("NCCL_IB_PCI_RELAXED_ORDERING") == "1"
    assert got.get("NCCL_IGNORE_CPU_AFFINITY") == "1"


def test_a_cpu_size_gets_no_gpu_environment():
    assert env("Standard_D4s_v5") == {}
