"""stackconfig/sizes.py: a catalog size in any case is the catalog's canonical name, whose GPU count is known.
The refused sizes (not in the catalog, no GPU, a fraction of a GPU, a near miss) are rows of the invalid table
(test_validation.py)."""

from __future__ import annotations

import pytest

from stackconfig import validate
from stackconfig.outputs import stack_outputs

from .stackconfig_factory import good_raw, problems


def test_a_catalog_size_in_any_case_gets_the_catalog_casing_and_a_known_gpu_count() -> None:
    raw = good_raw()
    raw["clusters"][0]["size"] = "standard_nd96isr_h100_v5"
    config = validate(raw)
    assert config.clusters[0].size == "Standard_ND96isr_H100_v5"
    outputs = stack_outputs(config, "00000000-0000-0000-0000-000000000000", "kv-test")
    assert outputs.clusters["h100-x4"].gpus_per_node == 8


# --- sizes Azure ML cannot run the jobs on (issue 33 item 5) ---------------------------------------------


@pytest.mark.parametrize(
    "size, reason",
    [
        ("Standard_ND96isr_MI300X_v5", "has AMD GPUs"),
        ("Standard_ND128isr_NDR_GB200_v6", "has Arm (Grace) host CPUs"),
        ("Standard_ND128isr_GB300_v6", "has Arm (Grace) host CPUs"),
    ],
)
def test_amd_gpus_and_arm_hosts_are_refused_with_the_reason(size: str, reason: str) -> None:

    raw = good_raw()
    raw["clusters"][0]["size"] = size
    (problem,) = problems(raw)
    assert problem.startswith(f"azml-gpu:clusters[0].size: '{size}' {reason}")
    assert "MI300X" not in problem.rsplit("such as", 1)[1] and "GB" not in problem.rsplit("such as", 1)[1]
