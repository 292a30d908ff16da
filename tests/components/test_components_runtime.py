"""run_program isolation: repeated runs in one process, the caller's runtime left untouched."""

from __future__ import annotations

import json

from pulumi.runtime import settings

from preflight.program import flatten_config, run_program


def _snapshot(result):
    """Resources by URN (registration order depends on thread scheduling; parents always come first)."""
    return sorted(
        (r.urn, r.id, json.dumps(r.inputs, sort_keys=True), r.parent, sorted(r.dependencies))
        for r in result.resources
    )


def test_two_runs_in_one_process_are_identical(runs):
    again = run_program("dev")
    assert again.ok
    assert _snapshot(again) == _snapshot(runs["dev"])
    assert again.outputs == runs["dev"].outputs


def test_runs_do_not_leak_into_each_other(runs):
    dev_urns = {r.urn for r in runs["dev"].resources}
    prod_urns = {r.urn for r in runs["prod"].resources}
    assert all(u.startswith("urn:pulumi:dev::azml-gpu::") for u in dev_urns)
    assert all(u.startswith("urn:pulumi:prod::azml-gpu::") for u in prod_urns)
    again = run_program("prod")
    assert {r.urn for r in again.resources} == prod_urns


def test_callers_context_is_left_alone(runs):
    assert settings.get_root_resource() is None
    run_program("dev")
    assert settings.get_root_resource() is None


def test_explicit_config_equals_the_stack_file(runs, stack_configs):
    explicit = run_program("dev", config=stack_configs["dev"])
    assert _snapshot(explicit) == _snapshot(runs["dev"])


def test_config_reaches_the_program_as_the_cli_sends_it():
    raw = {"azml-gpu:workspace": {"name": "w"}, "clusters": [], "azure-native:location": "eastus"}
    flat = flatten_config({**raw, "azml-gpu:flag": True})
    assert flat == {
        "azml-gpu:workspace": '{"name": "w"}',
        "azml-gpu:clusters": "[]",
        "azure-native:location": "eastus",
        "azml-gpu:flag": "true",
    }
