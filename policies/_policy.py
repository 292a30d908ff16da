"""The one shape of a policy module, and its adapter to pulumi-policy (used by registry.py only).

Every module in policies/ that defines a policy exposes:

    NAME: str                         # the policy name users configure ("min-nodes-zero")
    DESCRIPTION: str                  # one sentence: what the policy requires
    ENFORCEMENT: EnforcementLevel     # its default level (a stack's config may change it)
    CONFIG: dict[str, Any]            # JSON-schema properties of its config ({} when it takes none)
    KIND: "resource" | "stack"
    def validate(resource, config) -> list[str]               # KIND == "resource"
    def validate(resources, config) -> list[Violation]        # KIND == "stack"

`resource` is what Analyze receives for one resource (`.resource_type`, `.name`, `.urn`, `.props`: the
checked inputs); `resources` are the stack's resources as AnalyzeStack receives them (their outputs, plus
`.property_dependencies`). `config` is the policy's own config, schema defaults filled in by the CLI. The
function returns its findings instead of calling report_violation, so it is pure and the tests read its
verdict directly. A policy reads only its own config and computes everything it reports itself (shared
rules live in pure functions, e.g. policies/clusters.py): the order of the registry does not matter.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from pulumi_policy import (
    Policy,
    PolicyConfigSchema,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from policies.locks import record_analyzed

RESOURCE = "resource"
STACK = "stack"


class AnalyzedResource(Protocol):
    """What a policy reads of a resource: pulumi-policy's ResourceValidationArgs and PolicyResource both
    have these."""

    resource_type: str
    name: str
    urn: str
    props: Mapping[str, Any]


@dataclass(frozen=True)
class Violation:
    """A stack policy's finding: the message, and the URN of the resource it is about (None: the stack)."""

    message: str
    urn: str | None = None


ResourceValidate = Callable[[AnalyzedResource, Mapping[str, Any]], list[str]]
StackValidate = Callable[[Sequence[Any], Mapping[str, Any]], list[Violation]]


class CompanionFindings:
    """What a stack policy's `validate` leaves for its advisory companion in the same AnalyzeStack call
    (docs/policies.md, "Companion policies": pulumi-policy gives each policy only its own config, so the
    policy that reads the config computes both verdicts and its companion, registered after it, takes the
    advisory half once). The servicer runs a call's policies on one thread (pulumi_policy/policy.py
    `AnalyzeStack`, `for policy in self.__policies`), hence thread-local."""

    def __init__(self) -> None:
        self._local = threading.local()

    def put(self, messages: list[str]) -> None:
        self._local.messages = list(messages)

    def take(self) -> list[str]:
        """The messages put in this call, once: a second take (or one without a put) gives none."""
        messages, self._local.messages = getattr(self._local, "messages", []), []
        return messages


def to_pulumi(module: ModuleType) -> Policy:
    """The pulumi-policy Policy for a policy module of the shape above."""
    schema = PolicyConfigSchema(properties=module.CONFIG) if module.CONFIG else None
    if module.KIND == RESOURCE:
        validate_resource: ResourceValidate = module.validate

        def run_resource(args: ResourceValidationArgs, report_violation: Callable[..., None]) -> None:
            # What Analyze saw of a lock, for the stack policies (why here: policies/locks.py docstring).
            record_analyzed(args)
            # Sorted: the same resource gives the same report in the same order, whatever the order in
            # which a policy collected its findings.
            for message in sorted(validate_resource(args, args.get_config() or {})):
                report_violation(message, None)

        return ResourceValidationPolicy(
            name=module.NAME,
            description=module.DESCRIPTION,
            validate=run_resource,
            enforcement_level=module.ENFORCEMENT,
            config_schema=schema,
        )
    if module.KIND == STACK:
        validate_stack: StackValidate = module.validate

        def run_stack(args: StackValidationArgs, report_violation: Callable[..., None]) -> None:
            # Sorted by resource and message: AnalyzeStack's resources come in registration order, which
            # varies from run to run (the SDK registers from a thread pool); the report must not.
            found_all = validate_stack(args.resources, args.get_config() or {})
            for found in sorted(found_all, key=lambda v: (v.urn or "", v.message)):
                report_violation(found.message, found.urn)

        return StackValidationPolicy(
            name=module.NAME,
            description=module.DESCRIPTION,
            validate=run_stack,
            enforcement_level=module.ENFORCEMENT,
            config_schema=schema,
        )
    raise ValueError(f"{module.__name__}.KIND: {module.KIND!r}; use 'resource' or 'stack'")
