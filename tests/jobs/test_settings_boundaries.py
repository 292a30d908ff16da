"""Job settings (jobs/settings.py) at and around each level: the time limit per kind, shared memory from the
node's memory, and each `--set` value at the edge of what it takes. Published values: a job on a
low-priority node lives at most 7 days (learn.microsoft.com/azure/machine-learning/how-to-manage-quotas,
docs/reference/azure-notes.md "Job lifetime on a low-priority node"); Azure ML's default shm_size is 2g
(MicrosoftDocs/azure-ai-docs reference-yaml-job-command.md)."""

from __future__ import annotations

import pytest

from jobs.errors import UsageError
from jobs.settings import JobSettings, apply, defaults

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
