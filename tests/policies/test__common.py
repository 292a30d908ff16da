"""policies/_common.py, the policies' shared reading: the region rule and the evaluation date (config
`evaluation_date`, else $AZML_GPU_POLICY_DATE, else today), seen through no-retired-vm-series where the date
decides a verdict."""

from __future__ import annotations

from typing import Any

import pytest

from policies import no_retired_vm_series
from policies._common import UNKNOWN, evaluation_date, norm_region, undecided
from vmsizes.regions import normalize_region

from .policies_helpers import MAX, SIZE, cluster, facts, verdict

policy = no_retired_vm_series
NCV3 = {SIZE: "Standard_NC6s_v3", MAX: 1}


def test_norm_region_is_the_catalog_normaliser_and_none_safe() -> None:
    assert norm_region("US Gov Virginia") == normalize_region("US Gov Virginia") == "usgovvirginia"
    assert (norm_region(None), norm_region(42)) == (None, None)


def test_evaluation_date_reads_the_config() -> None:
    assert evaluation_date({"evaluation_date": "2026-01-31"}).isoformat() == "2026-01-31"


def test_evaluation_date_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the real CLI the gate's --date has no config to ride on; $AZML_GPU_POLICY_DATE does it."""
    nc = cluster(**{SIZE: "Standard_NC6", MAX: 1})
    monkeypatch.setenv("AZML_GPU_POLICY_DATE", "2023-09-05")
    assert verdict(policy, nc, {}) == []
    monkeypatch.setenv("AZML_GPU_POLICY_DATE", "2023-09-06")
    facts(verdict(policy, nc, {}), [("Standard_NC6 (NC (v1)) was retired on 2023-09-06",)])
    # the config wins over the environment
    assert verdict(policy, nc, {"evaluation_date": "2023-09-05"}) == []


def test_no_date_anywhere_means_today(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AZML_GPU_POLICY_DATE", raising=False)
    facts(verdict(policy, cluster(**NCV3), {}), [("was retired on 2025-09-30",)])


@pytest.mark.parametrize(
    ("config", "env", "source"),
    [({"evaluation_date": "30/11/2026"}, None, "evaluation_date"), ({}, "tomorrow", "AZML_GPU_POLICY_DATE")],
)
def test_a_bad_date_names_its_source(
    monkeypatch: pytest.MonkeyPatch, config: dict[str, Any], env: str | None, source: str
) -> None:
    if env is not None:
        monkeypatch.setenv("AZML_GPU_POLICY_DATE", env)
    with pytest.raises(ValueError, match=rf"^{source}: '.+' is not a date; use YYYY-MM-DD$"):
        verdict(policy, cluster(**NCV3), config)


def test_the_undecided_message_in_full() -> None:
    """What every policy says when a value its verdict needs is unknown in a preview: one value ("is", "it")
    or several ("are", "them"); None when every value is known."""
    assert undecided(**{"properties.properties.vmSize": UNKNOWN, "location": "eastus"}) == (
        "cannot decide during preview: properties.properties.vmSize is not known until deployment (computed "
        "from another resource's output), so this check would first run during `pulumi up`, after resources "
        "were already created. Fix: give it a literal value in the program (the stack config)."
    )
    assert undecided(minimumTlsVersion=UNKNOWN, allowBlobPublicAccess=UNKNOWN) == (
        "cannot decide during preview: minimumTlsVersion, allowBlobPublicAccess are not known until "
        "deployment (computed from another resource's output), so this check would first run during `pulumi "
        "up`, after resources were already created. Fix: give them a literal value in the program (the "
        "stack config)."
    )
    assert undecided(minimumTlsVersion="TLS1_2", allowBlobPublicAccess=None) is None
