"""Job settings that prevent known failures, derived from the size catalog and overridable with
`--set KEY=VALUE` (render, submit, run): the job's time limit, its shared memory, and per-size NCCL/UCX
environment. `render` writes them into the YAML (`limits.timeout`, `resources.shm_size`,
`environment_variables`) and lists them.

- `timeout` (limits.timeout, seconds; azure-ai-ml `command(timeout=)` -> `set_limits`): a job that hangs
  (a stuck collective, a dead data loader) is cancelled instead of holding nodes. Defaults: smoke and health
  1 h, scaling 2 h, train 7 days, the longest a job may run on a low-priority node
  (docs/reference/azure-notes.md "Job lifetime on a low-priority node"); `jobs run` resubmits a train job
  that reaches it only if it ended for an infrastructure cause, so set a train job's limit with
  `--set timeout=S` to what it needs.
- `shm_size` (resources.shm_size): Azure ML's default is 2g ("shm_size ... default 2g", MicrosoftDocs
  azure-ai-docs articles/machine-learning/reference-yaml-job-command.md). PyTorch DataLoader workers pass
  every batch through /dev/shm, and 2g is exhausted by a few workers per GPU on an 8-GPU node ("bus
  error"/"DataLoader worker killed"). Our choice: half the node's memory (`memory_gib` in the catalog),
  at least 2g; 2g where the catalog has no memory figure.
- Environment, every GPU job: `TORCH_NCCL_ASYNC_ERROR_HANDLING=3` (PyTorch's "tear down the process without
  cleanup" on a NCCL error or watchdog timeout, https://pytorch.org/docs/stable/torch_nccl_environment_variables.html):
  a hung or failed collective ends the process (and the job, so `jobs run` can resubmit) instead of
  blocking in cleanup; pinned because its default changed between torch releases.
- Environment per size, where Azure publishes it: what the Azure HPC VM image writes to /etc/nccl.conf on
  the VM (Azure/azhpc-images at 8e9d055f, components/customizations/ndv4.sh and ndv5.sh):
  `NCCL_IB_PCI_RELAXED_ORDERING=1` and `NCCL_IGNORE_CPU_AFFINITY=1` on both the ND A100 v4 family and the ND
  H100 v5 family; the image picks the file by size (components/setup_sku_customizations.sh:
  `standard_nd*v4) topoFamily="ndv4"`, `standard_nd96is*_h[1-2]00_v5) topoFamily="ndv5"`), so ND H200 v5
  gets the ND H100 v5 set. A job runs in a container that does not read the VM's /etc/nccl.conf, hence the
  variables. `NCCL_TOPO_FILE` is not set: the file the image points it at (/opt/microsoft/ndv5/topo.xml, a
  link the image makes on the VM) is a host path an Azure ML job container does not mount, so the variable
  would name a file that is not there; NCCL then detects the topology itself (NVIDIA/nccl src/graph/xml.cc
  `ncclTopoGetXmlFromFile` returns success on a missing file), which is what it does without the variable.
  `UCX_IB_PCI_RELAXED_ORDERING=on`, `CUDA_DEVICE_ORDER=PCI_BUS_ID` and `NCCL_SOCKET_IFNAME=eth0` are what
  Azure's own NCCL health checks pass on these sizes (Azure/azurehpc-health-checks, customTests NCCL
  all-reduce). The GB200/GB300 sizes get none (their ndv6.sh is not this project's sizes' set).
- `DATASET_UNMOUNT_TIMEOUT_SECONDS` for train jobs: jobs/unmount.py (time to upload the last checkpoint).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from jobs.errors import UsageError

DEFAULT_TIMEOUT_S = {"smoke": 3600, "health": 3600, "scaling": 7200, "train": 7 * 24 * 3600}
AZURE_DEFAULT_SHM = "2g"
GPU_ENV = {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "3"}
_HEALTH_CHECK_ENV = {
    "UCX_IB_PCI_RELAXED_ORDERING": "on",
    "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
    "NCCL_SOCKET_IFNAME": "eth0",
}
# The /etc/nccl.conf lines of azhpc-images ndv4.sh and ndv5.sh (the same two variables), minus NCCL_TOPO_FILE.
_AZHPC_NCCL_CONF = {"NCCL_IB_PCI_RELAXED_ORDERING": "1", "NCCL_IGNORE_CPU_AFFINITY": "1"}
#: catalog series -> environment (sources in the module docstring)
SERIES_ENV: dict[str, dict[str, str]] = {
    "ND A100 v4 (NDasrA100_v4)": {**_AZHPC_NCCL_CONF, **_HEALTH_CHECK_ENV},
    "NDm A100 v4 (NDm_A100_v4)": {**_AZHPC_NCCL_CONF, **_HEALTH_CHECK_ENV},
    "ND H100 v5": {**_AZHPC_NCCL_CONF, **_HEALTH_CHECK_ENV},
    # azhpc-images maps ND96is*_H200_v5 to the ND H100 v5 customization (ndv5.sh).
    "ND H200 v5": {**_AZHPC_NCCL_CONF, **_HEALTH_CHECK_ENV},
}
_SHM = re.compile(r"^[1-9][0-9]*[bkmg]$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class JobSettings:
    timeout_s: int | None
    shm_size: str
    env: dict[str, str] = field(default_factory=dict)
    overridden: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "timeout_s": self.timeout_s,
            "shm_size": self.shm_size,
            "environment_variables": self.env,
            "overridden": self.overridden,
        }


def _shm_for(size: str) -> str:
    from vmsizes import describe

    try:
        mem = describe(size).memory_gib
    except ValueError:
        return AZURE_DEFAULT_SHM
    return f"{max(2, int(mem // 2))}g" if mem else AZURE_DEFAULT_SHM


def defaults(kind: str, size: str) -> JobSettings:
    from vmsizes import describe

    try:
        vm = describe(size)
    except ValueError:
        vm = None
    env = dict(GPU_ENV) if vm is not None and (vm.gpus or 0) > 0 else {}
    if vm is not None:
        env |= SERIES_ENV.get(vm.series, {})
    return JobSettings(DEFAULT_TIMEOUT_S.get(kind), _shm_for(size), env)


def apply(settings: JobSettings, overrides: list[str] | tuple[str, ...]) -> JobSettings:
    """`--set KEY=VALUE` items: `timeout=SECONDS` (0 = no limit), `shm_size=64g`, `env.NAME=VALUE`
    (`env.NAME=` removes a default)."""
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(
                f"--set {item!r}: use KEY=VALUE, e.g. --set shm_size=64g or --set env.NCCL_IB_TIMEOUT=22"
            )
        if key == "timeout":
            if not value.isdigit():
                raise UsageError(
                    f"--set timeout={value}: whole seconds, e.g. --set timeout=86400 (0 = no limit)"
                )
            settings.timeout_s = int(value) or None
        elif key == "shm_size":
            if not _SHM.match(value):
                raise UsageError(f"--set shm_size={value}: a number and a unit b, k, m or g, e.g. 64g")
            settings.shm_size = value
        elif key.startswith("env."):
            name = key[4:]
            if not _ENV_NAME.match(name):
                raise UsageError(f"--set {key}: not an environment variable name")
            if value:
                settings.env[name] = value
            else:
                settings.env.pop(name, None)
        else:
            raise UsageError(f"--set {key}: unknown setting; use timeout, shm_size or env.NAME")
        settings.overridden.append(key)
    return settings


def attach(built: Any, overrides: list[str] | tuple[str, ...] = ()) -> JobSettings:
    """Set the settings on a built job (`jobs.builders.BuiltJob`) and record them in `built.extra`.

    Through the job's own fields: `limits.timeout` (a `CommandJobLimits`, what `command(timeout=)` ->
    `set_limits` makes) and `resources.shm_size`, environment variables merged over the builder's (an override
    wins; the builder's own, such as NCCL_DEBUG, stay). A `--file` job (jobs/userjob.py) keeps what its file
    sets (`extra["file_settings"]`): a default applies only where the file is silent, a `--set` always; each
    one the platform applies is added to `extra["platform"]`."""
    s = apply(defaults(built.kind, built.size), overrides)
    job = built.job
    from_file = built.extra.get("file_settings")
    platform = built.extra.get("platform")
    env = dict(job.environment_variables or {})
    for name in [k[4:] for k in s.overridden if k.startswith("env.")]:
        env.pop(name, None)  # an explicit override, or removal, replaces the builder's value too
    added = {k: v for k, v in s.env.items() if k not in env}
    job.environment_variables = {**added, **env}
    keep_timeout = bool(from_file and from_file["timeout"]) and "timeout" not in s.overridden
    keep_shm = bool(from_file and from_file["shm_size"]) and "shm_size" not in s.overridden
    if keep_timeout:
        s.timeout_s = int(job.limits.timeout)
    elif s.timeout_s:
        _set_timeout(job, s.timeout_s)
    if keep_shm:
        s.shm_size = str(_resource(job, "shm_size"))
    else:
        _set_shm(job, s.shm_size)
    if platform is not None:
        by = lambda key: " (--set)" if key in s.overridden else ""  # noqa: E731
        if not keep_timeout and s.timeout_s:
            platform.append(f"limits.timeout: {s.timeout_s}{by('timeout')}")
        if not keep_shm:
            platform.append(f"resources.shm_size: {s.shm_size}{by('shm_size')}")
        platform += [f"environment_variables.{k}: {v}{by('env.' + k)}" for k, v in added.items()]
    built.extra["settings"] = s.to_json() | {"environment_variables": dict(job.environment_variables)}
    return s


def _set_timeout(job: Any, seconds: int) -> None:
    if hasattr(job, "set_limits"):  # a Command node
        job.set_limits(timeout=seconds)
        return
    from azure.ai.ml.entities import CommandJobLimits

    if job.limits is None:
        job.limits = CommandJobLimits(timeout=seconds)
    else:
        job.limits.timeout = seconds


def _resource(job: Any, key: str) -> Any:
    res = job.resources
    return res.get(key) if isinstance(res, dict) else getattr(res, key, None)


def _set_shm(job: Any, shm: str) -> None:
    if hasattr(job, "set_resources"):  # a Command node
        job.set_resources(shm_size=shm)
        return
    from azure.ai.ml.entities import JobResourceConfiguration

    if job.resources is None:
        job.resources = JobResourceConfiguration()
    job.resources.shm_size = shm
