"""managed-network-isolation: the gate's check that an update does not loosen a deployed workspace's managed
network. Azure allows only tightening (Disabled -> AllowInternetOutbound -> AllowOnlyApprovedOutbound; the
rule and its source: `components.network.refused_isolation_change`, docs/azure-behaviour.md section 15), so
`pulumi up` of a looser mode fails at the workspace's update. The deployed mode is in the state, which no
policy sees: like cluster-replacement, this is the gate's own check of the update evaluation, always
mandatory (Azure refuses the change; there is nothing to acknowledge).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from preflight.events import Step, Violation
from preflight.wire import is_unknown

NAME = "managed-network-isolation"
WORKSPACE = "azure-native:machinelearningservices:Workspace"
DESCRIPTION = "An update must not loosen a deployed workspace's managed network isolation mode."


def _mode(inputs: Mapping[str, Any]) -> Any:
    network = inputs.get("managedNetwork")
    return network.get("isolationMode") if isinstance(network, Mapping) else None


def findings(steps: Iterable[Step]) -> list[Violation]:
    """One mandatory violation per workspace whose deployed isolation mode (its step's old inputs) the new
    inputs loosen. An unknown new mode decides nothing."""
    from components.network import refused_isolation_change  # imports the SDK's network module: when needed

    found = []
    for s in sorted((s for s in steps if s.type == WORKSPACE and s.old and s.new), key=lambda s: s.urn):
        new = _mode(s.inputs)
        if is_unknown(new):
            continue
        if why := refused_isolation_change(_mode(s.old_inputs), new):
            found.append(Violation(NAME, "mandatory", s.urn, f"workspace '{s.name}': {why}.", DESCRIPTION))
    return found
