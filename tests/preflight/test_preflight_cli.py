"""`python -m preflight` as users and CI run it (a subprocess each): the real dev and prod stacks, --json,
--date, --outputs-file, and bad input (exit 2, the flag or key named, no traceback)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from stackconfig.outputs import StackOutputs

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "stacks"


def preflight(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "preflight", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_dev_passes_with_the_plan_and_progress(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs.json"
    run = preflight("dev", "--outputs-file", str(outputs))
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    # progress on stderr, the plan on stdout (plain: not a tty)
    for kind in ("first-deploy", "update"):
        assert (
            f"preflight: evaluating __main__.py for stack 'dev' under Pulumi mocks: {kind} preview ..."
            in (run.stderr)
        )
        assert (
            f"preflight: {kind}: analyzing 13 resources (Analyze each, then AnalyzeStack) ..." in run.stderr
        )
    assert (
        "  t4-dev   Standard_NC4as_T4_v3  1          1          eastus  dedicated  1800 s  Enabled"
        in run.stdout
    )
    assert "Evaluation: first deploy: every resource created (12 create; " in run.stdout
    assert (
        "Evaluation: update against the stack deployed as declared (synthetic state) (12 same; " in run.stdout
    )
    # dev has no locks, but one role assignment (the workspace identity on its RBAC key vault): Contributor
    # is not enough for that one
    assert "Microsoft.Authorization/locks" not in run.stdout
    assert (
        "  Microsoft.Authorization/roleAssignments/write  (Owner, User Access Administrator or Role Based "
        "Access Control Administrator)" in run.stdout
    )
    assert run.stdout.rstrip().endswith("PASS: no mandatory violation in either evaluation (3 advisory).")
    written = StackOutputs.model_validate(json.loads(outputs.read_text()))
    assert written.workspace_name == "ws-llm-dev"
    assert written.clusters["t4-dev"].gpus_per_node == 1


def test_prod_passes_by_design_json() -> None:
    run = preflight("prod", "--json")
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert set(document) == {
        "stack",
        "policy_config",
        "resources",
        "evaluations",
        "violations",
        "permissions",
        "resource_check",
        "summary",
    }
    assert document["stack"] == "prod"
    # Every azure-native type is in the spec check's coverage, checked with its body, nothing left unchecked.
    coverage = {row["type"]: row for row in document["resource_check"]["coverage"]}
    assert document["resource_check"]["problems"] == []
    unchecked = [(t, r["not_checked"]) for t, r in coverage.items() if not r["checked"] or r["not_checked"]]
    assert unchecked == []
    assert coverage["azure-native:network:PrivateEndpoint"]["spec_note"].startswith("spec read at 2024-07-01")
    assert document["policy_config"] == {"file": str(ROOT / "policies" / "config" / "prod.json"), "notes": []}
    # One advisory by design: the system-assigned workspace identity (workspace-user-assigned-identity).
    assert [(v["policy"], v["enforcement"]) for v in document["violations"]] == [
        ("workspace-user-assigned-identity", "advisory")
    ]
    first, update = document["evaluations"]
    assert (first["kind"], first["state"], first["steps"], first["exit_code"]) == (
        "first-deploy",
        "none (a new stack)",
        {"create": 34},
        0,
    )
    assert first["unknown_inputs"] > 0 and update["unknown_inputs"] == 0
    assert (update["kind"], update["steps"], update["replacements"], update["deletes"]) == (
        "update",
        {"same": 34},
        [],
        [],
    )
    # prod declares no locks (a managed network asks for none), so needs no lock permission; the role
    # assignments need more than Contributor
    locks = [p for p in document["permissions"] if p["action"].startswith("Microsoft.Authorization/locks/")]
    assert locks == []
    assert {
        "action": "Microsoft.MachineLearningServices/workspaces/computes/write",
        "granted_by": "Contributor",
        "why": "create or update a100-spot, h100-x4",
    } in document["permissions"]
    permissions = document["permissions"]
    assignments = [p for p in permissions if "/roleAssignments/" in p["action"]]
    assert {p["granted_by"] for p in assignments} == {
        "Owner, User Access Administrator or Role Based Access Control Administrator"
    }
    joined = {p["action"]: p["granted_by"] for p in permissions if p["action"].endswith("/join/action")}
    assert joined == {
        "Microsoft.Network/virtualNetworks/subnets/join/action": "Network Contributor",
        "Microsoft.Network/privateDnsZones/join/action": "Private DNS Zone Contributor",
    }
    summary = document["summary"]
    assert summary["exit_code"] == 0
    assert summary["evaluations"] == {"first-deploy": 0, "update": 0}
    assert summary["resources_by_type"]["azure-native:machinelearningservices:Compute"] == 2
    assert [(q["region"], q["label"], q["reserved_vcpus"], q["quota"]) for q in summary["quota"]] == [
        ("eastus", "standardNDSH100v5Family", 384, 384),
        ("eastus", "total regional dedicated vCPUs", 384, 500),
        ("eastus", "low-priority vCPUs (all families)", 24, 100),
    ]
    cluster = next(
        r for r in document["resources"] if r["name"] == "h100-x4" and r["type"].endswith(":Compute")
    )
    assert set(cluster) == {"urn", "type", "name", "parent", "op", "inputs", "options"}
    assert cluster["op"] == "same" and cluster["inputs"]["azureApiVersion"] == "2025-12-01"
    assert cluster["parent"].endswith("azml-gpu:components:GpuCluster::h100-x4")
    assert cluster["inputs"]["properties"]["properties"]["vmSize"] == "Standard_ND96isr_H100_v5"
    assert cluster["options"]["deleteBeforeReplace"] is True


def test_fixture_with_mandatory_violation_exits_1() -> None:
    folder = FIXTURES / "over-quota"
    run = preflight(
        "over-quota",
        "--json",
        "--config-file",
        str(folder / "Pulumi.over-quota.yaml"),
        "--policy-config",
        str(folder / "policy.json"),
    )
    assert run.returncode == 1, run.stderr
    document = json.loads(run.stdout)
    assert [(v["policy"], v["enforcement"], v["urn"], v["evaluations"]) for v in document["violations"]] == [
        # A stack-level finding is the root stack's, as the engine reports it (preflight/analyzer.py).
        (
            "quota-reservation",
            "mandatory",
            "urn:pulumi:over-quota::azml-gpu::pulumi:pulumi:Stack::azml-gpu-over-quota",
            ["first-deploy", "update"],
        )
    ]
    assert document["summary"]["violations"] == {"mandatory": 1, "advisory": 0}


def test_a_stack_without_its_own_policy_config_is_an_error_naming_the_command_that_creates_one() -> None:
    """Issue 22: a new stack without policies/config/<stack>.json passed on the pack's defaults (no quota
    checked). Now exit 2, with the command that writes one; nothing is evaluated."""
    folder = FIXTURES / "no-rdma"
    run = preflight("no-rdma", "--json", "--config-file", str(folder / "Pulumi.no-rdma.yaml"))
    assert run.returncode == 2, run.stderr
    document = json.loads(run.stdout)
    assert document["errors"] == [
        "policies/config/no-rdma.json: no policy config for stack 'no-rdma', so the pack would run with its "
        "defaults (no quota checked, secure-defaults advisory); create it with `python -m preflight "
        'init-config no-rdma` and review it (docs/config.md, "Adding a stack")'
    ]
    assert document["summary"] == {"exit_code": 2}
    plain = preflight("no-rdma", "--config-file", str(folder / "Pulumi.no-rdma.yaml"))
    assert plain.returncode == 2 and "python -m preflight init-config no-rdma" in plain.stderr
    assert "Traceback" not in plain.stderr


def test_a_replaced_prod_cluster_fails_the_update_evaluation_with_state(tmp_path: Path) -> None:
    """--state: the stack as deployed (here: the prod stack as declared, exported by a first gate run's
    synthetic state); a new VM size replaces h100-x4 (replaceOnChanges), which prod's policy config makes a
    mandatory cluster-replacement; an acknowledgement lets it through."""
    from preflight.program import exported_state, run_program

    deployed = run_program("prod")
    state = tmp_path / "prod-state.json"
    state.write_text(json.dumps(exported_state(deployed)))
    changed = tmp_path / "Pulumi.prod.yaml"
    changed.write_text(
        (ROOT / "Pulumi.prod.yaml")
        .read_text()
        .replace("size: Standard_ND96isr_H100_v5", "size: Standard_ND96isr_H200_v5", 1)
    )
    run = preflight("prod", "--json", "--config-file", str(changed), "--state", str(state))
    assert run.returncode == 1, run.stderr
    update = json.loads(run.stdout)["evaluations"][1]
    assert update["state"] == str(state)
    assert [
        (r["name"], r["fields"], r["trigger"], r["delete_before_replace"]) for r in update["replacements"]
    ] == [
        ("h100-x4", ["properties.properties.vmSize"], "replaceOnChanges", True),
        # the cluster's new identity has a new principal: its role assignments (principalId is force-new,
        # gen/replacement.go forceNewMap) go with it, deleted first (calculateDependentReplacements)
        # (no AcrPull: Azure grants it to the cluster identity itself, stackconfig.identity.grant_plan)
        ("ws-llm-access-h100-x4-st-blob-contributor", ["principalId"], "provider", True),
    ]
    assert [
        (v["policy"], v["enforcement"]) for v in update["violations"] if v["enforcement"] == "mandatory"
    ] == [("cluster-replacement", "mandatory")]
    plain = preflight("prod", "--config-file", str(changed), "--state", str(state))
    assert "  replace: h100-x4 will be deleted and recreated (vmSize)" in plain.stdout
    policy = json.loads((ROOT / "policies" / "config" / "prod.json").read_text())
    policy["cluster-replacement"]["acknowledged"] = ["h100-x4"]
    acknowledged = tmp_path / "prod.json"
    acknowledged.write_text(json.dumps(policy))
    # the H200 pool has no quota in prod's config: advisory only, so the acknowledged replacement passes
    again = preflight(
        "prod", "--config-file", str(changed), "--state", str(state), "--policy-config", str(acknowledged)
    )
    assert again.returncode == 0, again.stdout[-2000:]


def test_bad_input_exits_2_without_traceback() -> None:
    unknown = preflight("staging")
    assert unknown.returncode == 2
    assert "STACK 'staging': no Pulumi.staging.yaml in" in unknown.stderr
    assert "use one of: capacity, dev, prod" in unknown.stderr
    bad_date = preflight("dev", "--date", "31/12/2026")
    assert bad_date.returncode == 2
    assert "argument --date: '31/12/2026' is not a date; use YYYY-MM-DD, e.g. 2027-01-31" in bad_date.stderr
    folder = FIXTURES / "invalid-config"
    invalid = preflight(
        "invalid-config",
        "--json",
        "--config-file",
        str(folder / "Pulumi.invalid-config.yaml"),
        "--policy-config",
        str(folder / "policy.json"),
    )
    assert invalid.returncode == 2
    assert json.loads(invalid.stdout)["errors"][0].startswith("azml-gpu:clusters[")
    assert "azml-gpu:clusters[0].max_instances: 0 is below 1" in invalid.stderr
    for run in (unknown, bad_date, invalid):
        assert "Traceback" not in run.stderr


def test_a_stack_file_that_is_not_yaml_exits_2_without_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "Pulumi.broken.yaml"
    broken.write_text("config:\n  azml-gpu:workspace: {name: [\n")
    policy = ROOT / "policies" / "config" / "dev.json"
    run = preflight("broken", "--config-file", str(broken), "--policy-config", str(policy))
    assert run.returncode == 2
    assert f"{broken} is not valid YAML" in run.stderr
    assert "Traceback" not in run.stderr


def test_config_file_reads_exactly_the_named_file(tmp_path: Path) -> None:
    custom = tmp_path / "custom.yaml"
    custom.write_text((ROOT / "Pulumi.dev.yaml").read_text())
    # A decoy beside it with the name the stack-name convention would give: never read.
    (tmp_path / "Pulumi.custom.yaml").write_text("config:\n  azml-gpu:workspace: {name: [\n")
    policy = ROOT / "policies" / "config" / "dev.json"
    run = preflight("dev", "--json", "--config-file", str(custom), "--policy-config", str(policy))
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    document = json.loads(run.stdout)
    assert [c["name"] for c in document["summary"]["clusters"]] == ["t4-dev"]


def test_config_file_with_a_yaml_error_is_named_even_beside_a_valid_decoy(tmp_path: Path) -> None:
    custom = tmp_path / "custom.yaml"
    custom.write_text("config:\n  azml-gpu:workspace: {name: [\n")
    (tmp_path / "Pulumi.custom.yaml").write_text((ROOT / "Pulumi.dev.yaml").read_text())
    policy = ROOT / "policies" / "config" / "dev.json"
    run = preflight("dev", "--config-file", str(custom), "--policy-config", str(policy))
    assert run.returncode == 2
    # one line, with the position and the fix (not PyYAML's multi-line dump)
    assert (
        f"  - --config-file: {custom} is not valid YAML at line 3, column 1: expected the node content, but "
        "found '<stream end>'; fix the YAML syntax\n"
    ) in run.stderr
    assert "Traceback" not in run.stderr


def test_unreadable_files_name_their_flag_and_exit_2_before_evaluating(tmp_path: Path) -> None:
    not_utf8 = tmp_path / "policy.json"
    not_utf8.write_bytes(b'{"quota-reservation": "\xff"}')
    stack_not_utf8 = tmp_path / "stack.yaml"
    stack_not_utf8.write_bytes(b"config:\n  azml-gpu:workspace: \xfe\n")
    cases = [
        (
            ("prod", "--policy-config", str(ROOT)),
            f"--policy-config: {ROOT} is a directory; give the policy config JSON file, e.g. "
            "policies/config/STACK.json",
        ),
        (
            ("prod", "--policy-config", str(not_utf8)),
            f"--policy-config: {not_utf8} is not UTF-8 text (byte 0xff at offset 23); save it as UTF-8",
        ),
        (
            ("prod", "--config-file", str(stack_not_utf8)),
            f"--config-file: {stack_not_utf8} is not UTF-8 text (byte 0xfe at offset 30); save it as UTF-8",
        ),
        (
            ("prod", "--config-file", str(tmp_path)),
            f"--config-file: cannot read {tmp_path}: Is a directory; check the stack name or path "
            "(STACK means ./Pulumi.STACK.yaml)",
        ),
        (
            ("prod", "--outputs-file", str(tmp_path / "missing" / "x.json")),
            f"--outputs-file: the folder {tmp_path / 'missing'} does not exist; create it or write to an "
            "existing folder",
        ),
        (
            ("prod", "--outputs-file", str(tmp_path)),
            f"--outputs-file: {tmp_path} is a directory; give a file path, e.g. {tmp_path / 'outputs.json'}",
        ),
        (
            ("prod", "--state", str(tmp_path / "nope.json")),
            f"--state: {tmp_path / 'nope.json'} does not exist; give the file that `pulumi stack export "
            "--show-secrets --file FILE` wrote",
        ),
    ]
    for args, message in cases:
        run = preflight(*args, "--json")
        assert run.returncode == 2, (args, run.stderr)
        assert "Traceback" not in run.stderr
        assert json.loads(run.stdout) == {"stack": "prod", "errors": [message], "summary": {"exit_code": 2}}
        # up front: the program was never evaluated
        assert "evaluating __main__.py" not in run.stderr


def test_usage_errors_with_json_print_the_json_error_document() -> None:
    run = preflight("dev", "--date", "tomorrow", "--json")
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert json.loads(run.stdout) == {
        "stack": None,
        "errors": [
            "argument --date: 'tomorrow' is not a date; use YYYY-MM-DD, e.g. 2027-01-31; see python -m "
            "preflight --help"
        ],
        "summary": {"exit_code": 2},
    }
    plain = preflight("dev", "--date", "tomorrow")
    assert plain.returncode == 2 and plain.stdout == "" and plain.stderr.startswith("usage: ")


def test_every_stack_in_the_repository_passes_its_gate_with_its_own_policy_config() -> None:
    """Each Pulumi.<stack>.yaml has a policies/config/<stack>.json the pack accepts, and the gate passes:
    a stack file added without its config (or a config left behind by a policy change) fails here."""
    stacks = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in ROOT.glob("Pulumi.*.yaml"))
    assert {"dev", "prod", "prod-westus3"} <= set(stacks)
    for stack in stacks:
        assert (ROOT / "policies" / "config" / f"{stack}.json").is_file(), stack
        run = preflight(stack, "--json")
        assert run.returncode == 0, (stack, run.stderr[-2000:])
        document = json.loads(run.stdout)
        assert document["policy_config"]["file"].endswith(f"policies/config/{stack}.json"), stack
