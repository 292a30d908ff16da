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
    assert "preflight: evaluating __main__.py for stack 'dev' under Pulumi mocks ..." in run.stderr
    assert "preflight: analyzing 10 resources (Analyze each, then AnalyzeStack) ..." in run.stderr
    assert (
        "  t4-dev   Standard_NC4as_T4_v3  1          1          eastus  dedicated  1800 s  Enabled"
        in run.stdout
    )
    assert run.stdout.rstrip().endswith("PASS: no mandatory violation (1 advisory).")
    written = StackOutputs.model_validate(json.loads(outputs.read_text()))
    assert written.workspace_name == "ws-llm-dev"
    assert written.clusters["t4-dev"].gpus_per_node == 1


def test_prod_passes_by_design_json() -> None:
    run = preflight("prod", "--json")
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert set(document) == {"stack", "resources", "violations", "summary"}
    assert document["stack"] == "prod"
    assert document["violations"] == []
    summary = document["summary"]
    assert summary["exit_code"] == 0
    assert summary["resources_by_type"]["azure-native:machinelearningservices:Compute"] == 3
    assert [(q["region"], q["label"], q["reserved_vcpus"], q["quota"]) for q in summary["quota"]] == [
        ("eastus", "standardNDSH100v5Family", 384, 384),
        ("eastus", "total regional dedicated vCPUs", 384, 500),
        ("eastus", "low-priority vCPUs (all families)", 24, 100),
        ("westus3", "standardNDSH100v5Family", 192, 192),
        ("westus3", "total regional dedicated vCPUs", 192, 200),
    ]
    cluster = next(
        r for r in document["resources"] if r["name"] == "h100-x4" and r["type"].endswith(":Compute")
    )
    assert set(cluster) == {"urn", "type", "name", "parent", "inputs", "options"}
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
    assert [(v["policy"], v["enforcement"], v["urn"]) for v in document["violations"]] == [
        ("quota-reservation", "mandatory", "")
    ]
    assert document["summary"]["violations"] == {"mandatory": 1, "advisory": 0}


def test_bad_input_exits_2_without_traceback() -> None:
    unknown = preflight("staging")
    assert unknown.returncode == 2
    assert "STACK 'staging': no Pulumi.staging.yaml in" in unknown.stderr
    assert "use one of: dev, prod" in unknown.stderr
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
            f"--config-file: cannot read {tmp_path}: Is a directory; give the path of a Pulumi stack file",
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
