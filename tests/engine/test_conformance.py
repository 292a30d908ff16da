"""The offline gate against the real Pulumi engine, input by input: every shipped stack and a corpus of
variants (each policy's violation, YAML edge values, policy-config forms, duplicate names, and updates with an
in-place change, a replacement, a cascade of replacements and a delete). For each, the gate's verdict must
equal the engine's: outcome, mandatory and advisory violations by policy and resource, replaced and deleted
resources (tests/engine/conformance.py). A difference is a gate bug, or a documented limit of the stand-in
provider (docs/engine.md).

The engine runs as `python -m engine preview` runs it: `pulumi preview --diff --policy-pack` of the CLI built
from Pulumi's Go modules, on a local file backend, with the stand-in azure-native plugin. Update cases preview
against the base stack as `pulumi up` of that engine deployed it, and the gate gets that stack's
`pulumi stack export --show-secrets`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conformance import Case, engine_verdict, gate_verdict, policy_config, stack_text, write_stack_file

from preflight import pulumicli as run
from preflight.workspace import Workspace

pytestmark = pytest.mark.slow

RETIRED = "Standard_NC6"  # NCv1, retired 2023-09-06 (vmsizes/data/sizes.yaml, its sources)
SECOND = "t4-dev-b"
SUBSCRIPTION_STORE = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-data/providers/"
STORE_ID = SUBSCRIPTION_STORE + "Microsoft.Storage/storageAccounts/stcorpus01"
PERSON = "7f1c2a9e-0d3b-4f5a-9c8e-2b6d4e1f3a50"


def cluster(config: dict[str, Any], i: int = 0) -> dict[str, Any]:
    return config["azml-gpu:clusters"][i]


def _set(path: str, value: Any):
    def edit(config: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        node: Any = config
        for p in parents:
            node = node[int(p)] if p.isdigit() else node.setdefault(p, {})
        node[leaf] = value

    return edit


def _add_second_cluster(config: dict[str, Any]) -> None:
    """The update cases' base: dev with a second small cluster, so that a delete can be tried."""
    extra = dict(cluster(config), name=SECOND, ssh="disabled")
    config["azml-gpu:clusters"].append(extra)


def _drop_second_cluster(config: dict[str, Any]) -> None:
    config["azml-gpu:clusters"] = [c for c in config["azml-gpu:clusters"] if c["name"] != SECOND]


def _two_grants(config: dict[str, Any]) -> None:
    grant = {"principal_id": PERSON, "principal_type": "User", "role": "Reader"}
    config.setdefault("azml-gpu:identity", {})["role_assignments"] = [grant, dict(grant)]


def _two_stores(config: dict[str, Any]) -> None:
    config.setdefault("azml-gpu:identity", {})["data_stores"] = [STORE_ID, STORE_ID]


def _level(policy: str, level: str):
    def edit(config: dict[str, Any]) -> None:
        entry = config.get(policy)
        config[policy] = {**entry, "enforcementLevel": level} if isinstance(entry, dict) else level

    return edit


def _all(level: str):
    """`"all": level` applies to every policy, then each policy's own level overrides it
    (pkg/resource/analyzer/config.go `applyConfig`): secure-defaults' own level is dropped so that "all"
    reaches it."""

    def edit(config: dict[str, Any]) -> None:
        config.get("secure-defaults", {}).pop("enforcementLevel", None)
        config["all"] = level

    return edit


def _shorthand(policy: str, level: str):
    def edit(config: dict[str, Any]) -> None:
        config[policy] = level

    return edit


FIRST_PREVIEW = [
    Case("dev", expect="ok"),
    Case("prod", stack="prod", expect="ok"),
    Case("prod-westus3", stack="prod-westus3", expect="ok"),
    Case("capacity", stack="capacity", expect="ok"),
    # Each policy's violation.
    Case("multi-node-without-rdma", edit=_set("azml-gpu:clusters.0.max_instances", 2), expect="policy"),
    Case("retired-size", edit=_set("azml-gpu:clusters.0.size", RETIRED)),
    Case("quota-exceeded", edit=_set("azml-gpu:clusters.0.max_instances", 8), expect="policy"),
    Case("idle-timer-too-long", edit=_set("azml-gpu:clusters.0.idle_time_before_scale_down", 7200)),
    Case("min-nodes-above-zero", edit=_set("azml-gpu:clusters.0.min_instances", 1)),
    # YAML 1.2, as the CLI reads stack files (go-yaml v3): `no` is a string, `30:00` is not 1800.
    Case("yaml-no-is-a-string", raw=lambda t: t.replace("env: dev", "env: no")),
    Case(
        "yaml-sexagesimal",
        raw=lambda t: t.replace("idle_time_before_scale_down: 1800", "idle_time_before_scale_down: 30:00"),
    ),
    Case(
        "yaml-duplicate-key",
        raw=lambda t: t.replace(
            "      max_instances: 1\n", "      max_instances: 1\n      max_instances: 1\n"
        ),
        expect="error",
    ),
    # Names that collide: the engine stops on a duplicate URN.
    Case("duplicate-grants", edit=_two_grants, expect="error"),
    Case("duplicate-data-stores", edit=_two_stores, expect="error"),
    # Policy-config forms the CLI accepts (pkg/resource/analyzer/config.go).
    Case("policy-remediate", policy=_level("secure-defaults", "remediate"), expect="policy"),
    Case("policy-all-mandatory", policy=_all("mandatory"), expect="policy"),
    Case("policy-shorthand", policy=_shorthand("secure-defaults", "mandatory"), expect="policy"),
    Case("policy-disabled", policy=_shorthand("secure-defaults", "disabled"), expect="ok"),
]

UPDATES = [
    Case("update-unchanged", update=True, expect="ok"),
    Case("update-in-place", update=True, edit=_set("azml-gpu:clusters.0.idle_time_before_scale_down", 1200)),
    Case("update-replace", update=True, edit=_set("azml-gpu:clusters.0.size", "Standard_NC8as_T4_v3")),
    Case(
        "update-cascade", update=True, edit=_set("azml-gpu:workspace.resource_group.name", "rg-train-dev-2")
    ),
    Case("update-rename-workspace", update=True, edit=_set("azml-gpu:workspace.name", "ws-llm-dev-2")),
    Case("update-delete", update=True, edit=_drop_second_cluster),
]


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Workspace]]:
    made: dict[str, Workspace] = {}

    def get(stack: str) -> Workspace:
        if stack not in made:
            made[stack] = Workspace.create(stack, tmp_path_factory.mktemp(f"engine-{stack}"))
        return made[stack]

    yield get  # type: ignore[misc]
    for ws in made.values():
        ws.cleanup()


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workspace, Path]]:
    """dev plus a second cluster, deployed by the engine (`pulumi up`), and its exported state."""
    ws = Workspace.create("dev", tmp_path_factory.mktemp("engine-dev-deployed"))
    write_stack_file(ws, stack_text("dev", Case("base"), _add_second_cluster))
    r = run.up(ws, capture=True)
    assert r.returncode == 0, r.stdout + r.stderr
    exported = ws.cli("stack", "export", "--show-secrets", "--stack", "dev")
    state = ws.work / "state-export.json"
    state.write_text(exported.stdout)
    yield ws, state
    ws.cleanup()


def _judge(case: Case, ws: Workspace, tmp: Path, state: Path | None, base_edit=None):
    text = stack_text(case.stack, case, base_edit)
    stack_file, policy_file = tmp / f"Pulumi.{case.stack}.yaml", tmp / f"{case.stack}.policy.json"
    stack_file.write_text(text)
    policy_file.write_text(json.dumps(policy_config(case.stack, case), indent=1))
    engine, engine_log = engine_verdict(ws, text, policy_file)
    gate, gate_report = gate_verdict(case.stack, stack_file, policy_file, state)
    return engine, gate, engine_log, gate_report


def _explain(engine, gate, engine_log, gate_report) -> str:
    report = gate_report if isinstance(gate_report, str) else json.dumps(gate_report.get("summary", {}))
    tail = engine_log[-3000:]
    return (
        f"\nengine: {engine}\ngate:   {gate}\n--- engine output (end) ---\n{tail}\n"
        f"--- gate ---\n{report[-2000:]}"
    )


@pytest.mark.parametrize("case", FIRST_PREVIEW, ids=lambda c: c.id)
def test_first_preview_gate_equals_engine(case: Case, workspaces, tmp_path: Path) -> None:
    engine, gate, log, report = _judge(case, workspaces(case.stack), tmp_path, None)
    if case.expect is not None:
        assert engine.outcome == case.expect, _explain(engine, gate, log, report)
    assert gate == engine, _explain(engine, gate, log, report)


@pytest.mark.parametrize("case", UPDATES, ids=lambda c: c.id)
def test_update_gate_equals_engine(case: Case, deployed, tmp_path: Path) -> None:
    ws, state = deployed
    base_and_case = Case(case.id, edit=lambda c: (_add_second_cluster(c), case.edit and case.edit(c)))
    engine, gate, log, report = _judge(base_and_case, ws, tmp_path, state)
    if case.expect is not None:
        assert engine.outcome == case.expect, _explain(engine, gate, log, report)
    assert gate == engine, _explain(engine, gate, log, report)
