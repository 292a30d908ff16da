"""The gate runs of the integration tests that more than one module reads (runner.Spec): the shipped stacks
(each deployed as declared, its state exported), the fixture stacks, the scenarios of
tests/fixtures/engine/record.py, variants of the shipped stacks, and the foreign program. `judge` names the
evaluations the engine judge (test_engine_judge.py) previews again with the CLI itself."""

from __future__ import annotations

import importlib.util
import json
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from tests.integration.gate.runner import PROGRAMS, ROOT, Spec

FIRST, UPDATE = "first-deploy", "update"
BOTH = (FIRST, UPDATE)
FIXTURES = ROOT / "tests" / "fixtures" / "stacks"
RECORDED = ROOT / "tests" / "fixtures" / "engine"
SUB = "00000000-0000-0000-0000-000000000000"
ON = "2026-11-30"
STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))

#: Each shipped stack as declared: the first deploy, and the update against its own `pulumi up` (state
#: exported).
SHIPPED = {stack: Spec(stack, stack, export_state=True, judge=BOTH) for stack in STACKS}


def stack_text(stack: str, edit: Callable[[dict[str, Any]], None]) -> str:
    """Pulumi.<stack>.yaml with `edit(config)` applied to its `config:` mapping."""
    document = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())
    edit(document["config"])
    return yaml.safe_dump(document, sort_keys=False, width=200)


def policy_text(stack: str, edit: Callable[[dict[str, Any]], None]) -> str:
    """policies/config/<stack>.json with `edit(config)` applied."""
    config = json.loads((ROOT / "policies" / "config" / f"{stack}.json").read_text())
    edit(config)
    return json.dumps(config, indent=1)


# -- tests/fixtures/stacks --

#: fixture -> (exit code, violations as (policy, enforcement, resource name or "" for the stack)), as each
#: fixture's first line documents it (retirement evaluated on 2026-11-30).
FIXTURE_VERDICTS: dict[str, tuple[int, list[tuple[str, str, str]]]] = {
    "clean": (0, []),
    "clean-vnet": (0, []),
    "no-rdma": (1, [("multi-node-requires-rdma", "mandatory", "a100-x2")]),
    "retired": (1, [("no-retired-vm-series", "mandatory", "v100")]),
    "over-quota": (1, [("quota-reservation", "mandatory", "")]),
    "quota-unknown": (0, [("quota-reservation-unknown", "advisory", "")] * 2),
    "warm-nodes": (
        0,
        [("idle-timer-bounds", "advisory", "h100-x2"), ("min-nodes-zero", "advisory", "h100-x2")],
    ),
    "lowpri-multi": (0, [("low-priority-multi-node", "advisory", "h100-spot")]),
    "cross-region": (0, [("cross-region-compute", "advisory", "h100-wus3")]),
    "private-unreachable": (1, [("private-network", "mandatory", "ws-private-unreachable-mlw")]),
    "public-workspace": (
        1,
        [
            ("secure-defaults", "mandatory", "h100-x2"),
            ("secure-defaults", "mandatory", "ws-public-workspace-mlw"),
        ],
    ),
}


def fixture(name: str, on: str = ON, **fields: Any) -> Spec:
    """A tests/fixtures/stacks/<name> stack with its own policy.json, retirement evaluated on `on`."""
    folder = FIXTURES / name
    judged = (FIRST,) if FIXTURE_VERDICTS.get(name, (0, []))[1] else ()
    return Spec(
        f"fixture-{name}" + ("" if on == ON else f"-on-{on}"),
        name,
        config_path=str(folder / f"Pulumi.{name}.yaml"),
        policy_path=str(folder / "policy.json"),
        on=on,
        judge=fields.pop("judge", judged),
        **fields,
    )


FIXTURE_RUNS = {name: fixture(name) for name in FIXTURE_VERDICTS}


# -- tests/fixtures/engine/record.py --


@cache
def record_module() -> ModuleType:
    """tests/fixtures/engine/record.py, the recorder of the event logs the unit tests read."""
    spec = importlib.util.spec_from_file_location("engine_record", RECORDED / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scenarios() -> list[str]:
    return list(record_module().SCENARIOS)


@cache
def recorded(name: str) -> Spec:
    """record.py's scenario `name` as a gate run: its stack file written by record.py's own `_edit`, against
    the shipped stack's state as deployed where the scenario says so."""
    record = record_module()
    stack, change, against_state = record.SCENARIOS[name]
    base = SHIPPED[stack]
    if change is None and not against_state:
        return base
    text = None
    if change is not None:
        with tempfile.TemporaryDirectory() as tmp:
            text = record._edit(stack, change, Path(tmp)).read_text()
    return Spec(
        name,
        stack,
        stack_text=text,
        state_of=base if against_state else None,
        judge=(UPDATE,) if against_state else (FIRST,),
        on=record.RECORDED_ON.isoformat(),
    )


# -- variants of the shipped stacks --


def _rename_workspace(config: dict[str, Any]) -> None:
    config["azml-gpu:workspace"]["name"] = "ws-llm2"


def _rename_group(config: dict[str, Any]) -> None:
    config["azml-gpu:workspace"]["resource_group"]["name"] = "rg-train2"


def _move_region(config: dict[str, Any]) -> None:
    config["azml-gpu:workspace"]["region"] = "westus3"
    config["azure-native:location"] = "westus3"


def _immutable_and_in_place(config: dict[str, Any]) -> None:
    """a100-spot: a new size and the dedicated tier (both fixed at creation); h100-x4: scale settings (updated
    in place)."""
    clusters = {c["name"]: c for c in config["azml-gpu:clusters"]}
    spot = clusters["a100-spot"]
    spot["size"] = "Standard_NC48ads_A100_v4"
    spot["tier"] = "dedicated"
    big = clusters["h100-x4"]
    big["max_instances"] = 2
    big["idle_time_before_scale_down"] = 600


def _acknowledge(*clusters: str) -> Callable[[dict[str, Any]], None]:
    def edit(config: dict[str, Any]) -> None:
        config["cluster-replacement"]["acknowledged"] = list(clusters)

    return edit


def _lock_workspace(config: dict[str, Any]) -> None:
    config["azml-gpu:locks"]["workspace"] = True


def _locked_resize(config: dict[str, Any]) -> None:
    _lock_workspace(config)
    config["azml-gpu:clusters"][0]["size"] = "Standard_NC48ads_A100_v4"


PROD = SHIPPED["prod"]
RENAMED_WORKSPACE = Spec(
    "prod-renamed-workspace",
    "prod",
    stack_text=stack_text("prod", _rename_workspace),
    state_of=PROD,
    judge=(UPDATE,),
)
RENAMED_GROUP = Spec(
    "prod-renamed-group", "prod", stack_text=stack_text("prod", _rename_group), state_of=PROD, judge=(UPDATE,)
)
MOVED_REGION = Spec("prod-moved-region", "prod", stack_text=stack_text("prod", _move_region), state_of=PROD)
IMMUTABLE = Spec(
    "prod-immutable-and-in-place",
    "prod",
    stack_text=stack_text("prod", _immutable_and_in_place),
    state_of=PROD,
    judge=(UPDATE,),
)
SIZE_ACKNOWLEDGED = Spec(
    "prod-size-change-acknowledged",
    "prod",
    stack_text=recorded("prod-size-change").stack_text,
    policy_text=policy_text("prod", _acknowledge("h100-x4")),
    state_of=PROD,
)
#: capacity deployed with its workspace locked (CanNotDelete); then its cluster resized, acknowledged.
LOCKED_CAPACITY = Spec(
    "capacity-workspace-locked",
    "capacity",
    stack_text=stack_text("capacity", _lock_workspace),
    export_state=True,
)
LOCKED_RESIZE = Spec(
    "capacity-acknowledged-resize-under-a-lock",
    "capacity",
    stack_text=stack_text("capacity", _locked_resize),
    policy_text=policy_text("capacity", _acknowledge("a100-wus3")),
    state_of=LOCKED_CAPACITY,
)


# -- policy config forms (pkg/resource/analyzer/config.go) --


def _remediate_shorthand(config: dict[str, Any]) -> None:
    config["secure-defaults"] = (
        "remediate"  # the level string alone: the policy's properties are its defaults
    )


def _all_mandatory(config: dict[str, Any]) -> None:
    """`"all"` applies to every policy; a policy's own level overrides it, so secure-defaults' is dropped."""
    config["secure-defaults"].pop("enforcementLevel")
    config["all"] = "mandatory"


def _disabled(config: dict[str, Any]) -> None:
    config["secure-defaults"]["enforcementLevel"] = "disabled"


POLICY_FORMS = {
    form: Spec(f"dev-policy-{form}", "dev", policy_text=policy_text("dev", edit), judge=(FIRST,))
    for form, edit in (
        ("remediate-shorthand", _remediate_shorthand),
        ("all-mandatory", _all_mandatory),
        ("disabled", _disabled),
    )
}

# -- duplicate URNs --

PERSON = "7f1c2a9e-0d3b-4f5a-9c8e-2b6d4e1f3a50"


def _two_grants(config: dict[str, Any]) -> None:
    grant = {"principal_id": PERSON, "principal_type": "User", "role": "Reader"}
    config.setdefault("azml-gpu:identity", {})["role_assignments"] = [grant, dict(grant)]


DUPLICATE_GRANTS = Spec(
    "dev-duplicate-grants", "dev", stack_text=stack_text("dev", _two_grants), judge=(FIRST,)
)

# -- a program that is not this repository's (tests/fixtures/programs/hand-built) --

HAND_BUILT = PROGRAMS / "hand-built"
FOREIGN = Spec("hand-built-raw", "raw", root=str(HAND_BUILT), judge=BOTH)
FOREIGN_GROUP_LOCK = Spec("hand-built-rg-level-lock", "rg-level-lock", root=str(HAND_BUILT))

#: Every run the engine judge previews again (test_engine_judge.py).
JUDGED = [
    *SHIPPED.values(),
    *(run for run in FIXTURE_RUNS.values() if run.judge),
    recorded("prod-size-change"),
    recorded("prod-cluster-removed"),
    recorded("westus3-looser-network"),
    recorded("dev-retired-size"),
    recorded("dev-duplicate-urn"),
    RENAMED_WORKSPACE,
    RENAMED_GROUP,
    IMMUTABLE,
    *POLICY_FORMS.values(),
    DUPLICATE_GRANTS,
    FOREIGN,
]
