"""The one analyzed-resource record: a resource as the engine registered it, decided its step and sends it to
the policy pack.

`preflight.program.run_program` fills it from each registration (preflight.mocks); the gate adds the
provider the engine sends with a custom resource (`dataclasses.replace(r, provider=...)`);
`preflight.analyzer.PolicyPack.analyze` / `analyze_stack` send it over the analyzer protocol; tests build
one by hand with the first four fields (type, name, urn, inputs) and what the case needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from preflight.engine import Replacement


@dataclass(frozen=True)
class Provider:
    """A resource's provider as the engine sends it to the analyzer (AnalyzerProviderResource: its inputs)."""

    type: str
    name: str
    urn: str
    inputs: Mapping[str, Any]


@dataclass(frozen=True)
class Resource:
    """One resource of a preview.

    - `inputs`: what Analyze receives (custom resources: after the provider's Check, e.g. with
      `azureApiVersion`); `outputs`: what AnalyzeStack receives (custom: the step's outputs; components:
      their registered outputs; the stack: its exports; None: the inputs, for a resource built by hand);
      `program_inputs`: what the program sent; `state`: what the program got back from the registration.
    - `provider`: the provider sent with the resource to the analyzer (the gate sets it for custom
      azure-native resources); `provider_ref`: the registration's provider reference, as the program gave it.
    - `op`: "create" | "same" | "update" | "replace"; `replacement`: why, for a replace.
    """

    type: str
    name: str
    urn: str
    inputs: Mapping[str, Any]
    parent: str | None = None
    dependencies: tuple[str, ...] = ()
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    outputs: Mapping[str, Any] | None = None
    provider: Provider | None = None
    id: str | None = None
    custom: bool = False
    provider_ref: str | None = None
    state: Mapping[str, Any] = field(default_factory=dict)
    program_inputs: Mapping[str, Any] = field(default_factory=dict)
    op: str = "create"
    replacement: Replacement | None = None
    old_id: str | None = None  # the id in the state, for a replace (whose new id is unknown)

    @property
    def replace_on_changes(self) -> list[str]:
        return list(self.options.get("replaceOnChanges", []))

    @property
    def delete_before_replace(self) -> bool:
        return bool(self.options.get("deleteBeforeReplace"))

    @property
    def protect(self) -> bool:
        return bool(self.options.get("protect"))

    @property
    def ignore_changes(self) -> list[str]:
        return list(self.options.get("ignoreChanges", []))
