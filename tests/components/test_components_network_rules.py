"""Which managed network isolation changes Azure refuses on a deployed workspace (how-to-managed-network.md:
"once a managed VNet workspace is configured to allow only approved outbound, the workspace cannot be
reconfigured to allow internet outbound"; internet outbound "cannot be reconfigured to disabled")."""

from __future__ import annotations

import pytest

from components.network import refused_isolation_change

MODES = ("Disabled", "AllowInternetOutbound", "AllowOnlyApprovedOutbound")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (None, "AllowInternetOutbound"),
        ("Disabled", "AllowOnlyApprovedOutbound"),
        ("AllowInternetOutbound", "AllowOnlyApprovedOutbound"),
        ("AllowOnlyApprovedOutbound", "AllowOnlyApprovedOutbound"),
        (None, None),
    ],
)
def test_tightening_or_keeping_is_accepted(old, new) -> None:
    assert refused_isolation_change(old, new) is None


def test_approved_outbound_back_to_internet_outbound_is_refused() -> None:
    assert refused_isolation_change("AllowOnlyApprovedOutbound", "AllowInternetOutbound") == (
        "managedNetwork.isolationMode AllowOnlyApprovedOutbound -> AllowInternetOutbound: Azure can't "
        "loosen a workspace's managed network once set (how-to-managed-network.md); keep isolation_mode: "
        "AllowOnlyApprovedOutbound, or create a new workspace (stack) for the looser network"
    )


@pytest.mark.parametrize("old", MODES[1:])
def test_turning_a_managed_network_off_is_refused(old) -> None:
    assert refused_isolation_change(old, None) is not None
    assert refused_isolation_change(old, "Disabled") is not None
