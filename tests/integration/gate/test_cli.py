"""`python -m preflight` as users and CI run it, a subprocess each: the plan and progress, --outputs-file,
--export-state read back by --state, --config-file reading exactly the named file, and bad input: exit 2 with
every problem named (the flag, the key, the fix), no traceback, and with --json the JSON error document."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stackconfig.outputs import StackOutputs
from tests.integration.gate.runner import ROOT, Command, Gates, Outcome
from tests.integration.gate.specs import FIXTURES

BROKEN_YAML = "config:\n  azml-gpu:workspace: {name: [\n"
NO_RDMA = FIXTURES / "no-rdma"
INVALID = FIXTURES / "invalid-config"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def dev(gates: Gates, folder: Path) -> dict[str, Outcome]:
    """dev as a user runs it with --outputs-file and --export-state, from a stack file of another name (a
    broken decoy beside it with the name the stack-name convention would give); then --json against the
    exported state; then that state renamed to another stack and project."""
    custom = folder / "custom.yaml"
    custom.write_text((ROOT / "Pulumi.dev.yaml").read_text())
    (folder / "Pulumi.custom.yaml").write_text(BROKEN_YAML)
    outputs, state = folder / "outputs.json", folder / "dev-state.json"
    args = ("dev", "--config-file", str(custom), "--outputs-file", str(outputs), "--export-state", str(state))
    plain = gates.one(Command("cli-dev", args))
    other = folder / "other-state.json"
    if state.exists():
        other.write_text(
            state.read_text().replace("urn:pulumi:dev::azml-gpu::", "urn:pulumi:staging::other::")
        )
    again, refused = gates.run(
        Command("cli-dev-state", ("dev", "--json", "--state", str(state))),
        Command("cli-dev-other-state", ("dev", "--json", "--state", str(other))),
    )
    return {"plain": plain, "again": again, "refused": refused}


def test_dev_passes_with_the_plan_and_progress(dev: dict[str, Outcome], folder: Path) -> None:
    run = dev["plain"]
    assert run.exit_code == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    # progress on stderr, the plan on stdout (plain: not a tty)
    assert run.stderr.startswith("preflight: Pulumi CLI ")
    for line in (
        "preflight: first-deploy: pulumi preview of a new stack 'dev' with the policy pack ...",
        "preflight: update: pulumi up of the stack as declared, into the offline provider ...",
        "preflight: update: pulumi preview against the stack deployed as declared (pulumi up, ",
    ):
        assert line in run.stderr  # (not each on its own line: test_progress_lines_are_whole)
    assert run.stderr.endswith(
        f"preflight: wrote the stack outputs to {folder / 'outputs.json'}\n"
        f"preflight: wrote the deployed-as-declared state to {folder / 'dev-state.json'}\n"
    )
    out = run.stdout
    assert out.startswith("Policy gate for stack dev (retirement evaluated on ")
    assert f"policy config: {ROOT / 'policies' / 'config' / 'dev.json'}\n" in out
    assert "  t4-dev   Standard_NC4as_T4_v3  1          1          eastus  dedicated  1800 s  Enabled" in out
    assert "Evaluation: first deploy: every resource created (13 create; " in out
    assert "Evaluation: update against the stack deployed as declared (pulumi up, " in out
    assert " s) (13 same; 0 input values unknown until deployment)" in out
    # dev has no locks, but one role assignment (the workspace identity on its RBAC key vault): Contributor is
    # not enough for that one; the actions are listed with --permissions, here the one line of roles
    assert "Microsoft.Authorization/locks" not in out
    assert "  Microsoft.Authorization/roleAssignments/write  (" not in out
    (line,) = [x for x in out.splitlines() if x.startswith("Azure permissions: ")]
    assert "Role Based Access Control Administrator" in line
    assert line.endswith("(--permissions lists the 16 actions)")
    assert out.rstrip().endswith("PASS: no mandatory violation in either evaluation (3 advisory).")


def test_outputs_file_holds_the_stack_outputs(dev: dict[str, Outcome], folder: Path) -> None:
    written = StackOutputs.model_validate(json.loads((folder / "outputs.json").read_text()))
    assert written.workspace_name == "ws-llm-dev"
    assert written.resource_group == "rg-train-dev"
    assert written.clusters["t4-dev"].gpus_per_node == 1
    assert written.clusters["t4-dev"].ssh_enabled is True


def test_the_exported_state_reads_back_as_all_sames(dev: dict[str, Outcome], folder: Path) -> None:
    """--export-state writes `pulumi stack export`'s document (its secrets in plain text: --show-secrets); the
    update against it with --state changes nothing."""
    state = folder / "dev-state.json"
    document = json.loads(state.read_text())
    compute = next(r for r in document["deployment"]["resources"] if r["urn"].endswith("Compute::t4-dev"))
    credentials = compute["inputs"]["properties"]["properties"]["userAccountCredentials"]
    assert credentials["adminUserSshPublicKey"].startswith("ssh-rsa ")
    run = dev["again"]
    assert run.exit_code == 0, run.stderr[-3000:]
    first, update = run.json["evaluations"]
    assert update["state"] == str(state)
    assert (update["steps"], update["replacements"], update["deletes"]) == ({"same": 13}, [], [])
    assert update["violations"] == first["violations"]


def test_a_state_of_another_stack_and_project_is_refused(dev: dict[str, Outcome], folder: Path) -> None:
    run = dev["refused"]
    assert run.exit_code == 2 and "Traceback" not in run.stderr
    other = folder / "other-state.json"
    assert run.json == {
        "stack": "dev",
        "errors": [
            f"--state: {other} is the state of stack 'staging' of project 'other', not of stack 'dev' of "
            f"project "
            "'azml-gpu'; export this stack's state with `pulumi stack export --stack dev --show-secrets "
            "--file "
            "FILE` or `python -m preflight dev --export-state FILE`"
        ],
        "summary": {"exit_code": 2},
    }


def test_progress_lines_are_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two threads report progress at once (the gate's first deploy and update run together): each line
    reaches stderr whole. The stream below lets both threads' first writes happen before either goes on, as
    the scheduler sometimes has them."""
    import threading

    from preflight.__main__ import _progress

    class Stream:
        def __init__(self) -> None:
            self.text, self.both = "", threading.Barrier(2)
            self.first: set[int] = set()

        def write(self, data: str) -> int:
            self.text += data
            if threading.get_ident() not in self.first:  # each thread's first write: wait for the other's
                self.first.add(threading.get_ident())
                self.both.wait(timeout=5)
            return len(data)

        def flush(self) -> None:
            pass

    stream = Stream()
    monkeypatch.setattr("sys.stderr", stream)
    threads = [threading.Thread(target=_progress, args=(f"line {n}",)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(stream.text.splitlines()) == ["preflight: line 1 ...", "preflight: line 2 ..."]


# -- input the gate refuses before running the CLI --


@pytest.fixture(scope="module")
def refused(gates: Gates, folder: Path) -> dict[str, Outcome]:
    broken = folder / "Pulumi.broken.yaml"
    broken.write_text(BROKEN_YAML)
    decoyed = folder / "decoyed"
    decoyed.mkdir()
    (decoyed / "custom.yaml").write_text(BROKEN_YAML)
    (decoyed / "Pulumi.custom.yaml").write_text((ROOT / "Pulumi.dev.yaml").read_text())
    not_utf8 = folder / "policy.json"
    not_utf8.write_bytes(b'{"quota-reservation": "\xff"}')
    stack_not_utf8 = folder / "stack.yaml"
    stack_not_utf8.write_bytes(b"config:\n  azml-gpu:workspace: \xfe\n")
    not_export = folder / "not-an-export.json"
    not_export.write_text(json.dumps({"resources": []}))
    no_id = folder / "existing.json"
    no_id.write_text(json.dumps([{"name": "kv-cmk", "properties": {}}]))
    dev_policy = str(ROOT / "policies" / "config" / "dev.json")
    advisory = folder / "prod-advisory.json"
    prod_policy = json.loads((ROOT / "policies" / "config" / "prod.json").read_text())
    prod_policy["secure-defaults"]["enforcementLevel"] = "advisory"
    advisory.write_text(json.dumps(prod_policy))
    commands = {
        # issue 33 item 8: both problems, not only the missing policy config
        "no-policy-config-bad-stack": (
            "invalid-config",
            "--json",
            "--config-file",
            str(INVALID / "Pulumi.invalid-config.yaml"),
        ),
        # issue 33 item 7: prod says production; its policy config may not make secure-defaults advisory
        "production-advisory": ("prod", "--json", "--policy-config", str(advisory)),
        "no-policy-config": ("no-rdma", "--json", "--config-file", str(NO_RDMA / "Pulumi.no-rdma.yaml")),
        "no-policy-config-plain": ("no-rdma", "--config-file", str(NO_RDMA / "Pulumi.no-rdma.yaml")),
        "unknown-stack": ("staging",),
        "unknown-stack-markdown": ("staging", "--format", "markdown"),
        "bad-date": ("dev", "--date", "31/12/2026"),
        "bad-date-json": ("dev", "--date", "tomorrow", "--json"),
        "invalid-config": (
            "invalid-config",
            "--json",
            "--config-file",
            str(INVALID / "Pulumi.invalid-config.yaml"),
            "--policy-config",
            str(INVALID / "policy.json"),
        ),
        "not-yaml": ("broken", "--config-file", str(broken), "--policy-config", dev_policy),
        "decoyed": ("dev", "--config-file", str(decoyed / "custom.yaml"), "--policy-config", dev_policy),
        "policy-config-folder": ("prod", "--json", "--policy-config", str(ROOT)),
        "policy-config-not-utf8": ("prod", "--json", "--policy-config", str(not_utf8)),
        "config-file-not-utf8": ("prod", "--json", "--config-file", str(stack_not_utf8)),
        "config-file-folder": ("prod", "--json", "--config-file", str(folder)),
        "outputs-file-missing-folder": (
            "prod",
            "--json",
            "--outputs-file",
            str(folder / "missing" / "x.json"),
        ),
        "outputs-file-folder": ("prod", "--json", "--outputs-file", str(folder)),
        "state-missing": ("prod", "--json", "--state", str(folder / "nope.json")),
        "state-not-an-export": ("prod", "--json", "--state", str(not_export)),
        "existing-without-id": ("prod", "--json", "--existing", str(no_id)),
        "export-and-state": (
            "dev",
            "--json",
            "--state",
            str(not_export),
            "--export-state",
            str(folder / "s.json"),
        ),
    }
    runs = gates.run(*(Command(f"cli-{name}", args) for name, args in commands.items()))
    return {name: run for name, run in zip(commands, runs, strict=True)}


def test_refused_input_exits_2_without_a_traceback_and_never_runs_the_cli(
    refused: dict[str, Outcome],
) -> None:
    for name, run in refused.items():
        assert run.exit_code == 2, (name, run.stderr[-2000:])
        assert "Traceback" not in run.stderr, name
        assert "preflight: Pulumi CLI " not in run.stderr, name


def test_a_stack_without_its_own_policy_config_names_the_command_that_writes_one(
    refused: dict[str, Outcome],
) -> None:
    assert refused["no-policy-config"].json == {
        "stack": "no-rdma",
        "errors": [
            "policies/config/no-rdma.json: no policy config for stack 'no-rdma', so the pack would run with "
            "its "
            "defaults (no quota checked, secure-defaults advisory); create it with `python -m preflight "
            'init-config no-rdma` and review it (docs/config.md, "Adding a stack")'
        ],
        "summary": {"exit_code": 2},
    }
    plain = refused["no-policy-config-plain"]
    assert plain.stdout == ""
    assert "preflight: no-rdma: cannot evaluate (1 problem(s)):\n" in plain.stderr
    assert "create it with `python -m preflight init-config no-rdma`" in plain.stderr


def test_a_missing_policy_config_and_a_bad_stack_config_are_reported_together(
    refused: dict[str, Outcome],
) -> None:
    errors = refused["no-policy-config-bad-stack"].json["errors"]
    assert len(errors) == 4
    assert sum(e.startswith("azml-gpu:clusters[") for e in errors) == 3
    assert errors[-1].startswith(
        "policies/config/invalid-config.json: no policy config for stack 'invalid-config'"
    )


def test_a_production_stack_with_an_advisory_policy_config_is_refused(refused: dict[str, Outcome]) -> None:
    run = refused["production-advisory"]
    assert run.exit_code == 2 and run.json["errors"] == [
        "--policy-config: secure-defaults is advisory, but the stack's azml-gpu:environment is production, "
        'which enforces it; set "secure-defaults": {"enforcementLevel": "mandatory", ...}, or set '
        "azml-gpu:environment: development if the stack is not production"
    ]


def test_an_unknown_stack_lists_the_stacks(refused: dict[str, Outcome]) -> None:
    stderr = refused["unknown-stack"].stderr
    assert (
        f"STACK 'staging': no Pulumi.staging.yaml in {ROOT}; use one of: capacity, dev, prod, prod-westus3"
        in (stderr)
    )
    markdown = refused["unknown-stack-markdown"].stdout.splitlines()
    assert markdown[0] == "## Policy gate: cannot evaluate stack `staging` (1 problem(s))"
    assert markdown[2].startswith("- STACK 'staging': no Pulumi.staging.yaml in ")


def test_usage_errors(refused: dict[str, Outcome]) -> None:
    plain = refused["bad-date"]
    assert plain.stdout == "" and plain.stderr.startswith("usage: ")
    assert "argument --date: '31/12/2026' is not a date; use YYYY-MM-DD, e.g. 2027-01-31" in plain.stderr
    assert refused["bad-date-json"].json == {
        "stack": None,
        "errors": [
            "argument --date: 'tomorrow' is not a date; use YYYY-MM-DD, e.g. 2027-01-31; see python -m "
            "preflight --help"
        ],
        "summary": {"exit_code": 2},
    }


def test_an_invalid_stack_config_names_every_key(refused: dict[str, Outcome]) -> None:
    run = refused["invalid-config"]
    errors = run.json["errors"]
    assert len(errors) == 3 and all(e.startswith("azml-gpu:clusters[") for e in errors)
    assert "  - azml-gpu:clusters[0].max_instances: 0 is below 1; use at least 1" in run.stderr


def test_a_stack_file_that_is_not_yaml_is_named_with_the_position(
    refused: dict[str, Outcome], folder: Path
) -> None:
    assert f"{folder / 'Pulumi.broken.yaml'} is not valid YAML" in refused["not-yaml"].stderr
    # --config-file reads exactly the named file, not a valid decoy named as the stack-name convention would
    custom = folder / "decoyed" / "custom.yaml"
    assert (
        f"  - --config-file: {custom} is not valid YAML at line 3, column 1: expected the node content, but "
        "found '<stream end>'; fix the YAML syntax\n"
    ) in refused["decoyed"].stderr


def test_unreadable_files_name_their_flag(refused: dict[str, Outcome], folder: Path) -> None:
    expected = {
        "policy-config-folder": f"--policy-config: {ROOT} is a directory; give the file's path",
        "policy-config-not-utf8": (
            f"--policy-config: {folder / 'policy.json'} is not UTF-8 text (byte 0xff at offset 23); save it "
            f"as UTF-8"
        ),
        "config-file-not-utf8": (
            f"--config-file: {folder / 'stack.yaml'} is not UTF-8 text (byte 0xfe at offset 30); save it as "
            f"UTF-8"
        ),
        "config-file-folder": f"--config-file: {folder} is a directory; give the file's path",
        "outputs-file-missing-folder": (
            f"--outputs-file: the folder {folder / 'missing'} does not exist; create it or write to an "
            f"existing "
            "folder"
        ),
        "outputs-file-folder": (
            f"--outputs-file: {folder} is a directory; give a file path, e.g. {folder / 'outputs.json'}"
        ),
        "state-missing": (
            f"--state: {folder / 'nope.json'} does not exist; give the file that `pulumi stack export "
            "--show-secrets --file FILE` wrote"
        ),
        "state-not-an-export": (
            f"--state: {folder / 'not-an-export.json'}: not a `pulumi stack export` document (no "
            "deployment.resources list); create it with `pulumi stack export --show-secrets --file FILE`"
        ),
        "existing-without-id": (
            f"--existing: {folder / 'existing.json'}: item 0 has no ARM id (`id: /subscriptions/...`); give "
            f"the "
            "JSON `az keyvault show --ids <vault id>` prints (one object, or a list of them)"
        ),
        "export-and-state": (
            "--export-state: writes the stack deployed as declared, which --state replaces; drop one of them"
        ),
    }
    for name, message in expected.items():
        stack = "dev" if name == "export-and-state" else "prod"
        assert refused[name].json == {"stack": stack, "errors": [message], "summary": {"exit_code": 2}}, name


def test_init_config_writes_a_reviewable_policy_config(gates: Gates, folder: Path) -> None:
    """`python -m preflight init-config STACK` in a stack folder (its Pulumi.yaml): prod's clusters have no
    SSH, its workspace is private; never overwritten without --force; an unknown stack is refused."""
    team = folder / "team"
    (team / "policies" / "config").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", team / "Pulumi.yaml")
    shutil.copy(ROOT / "Pulumi.prod.yaml", team / "Pulumi.prod-eu.yaml")
    first = gates.one(Command("cli-init-config", ("init-config", "prod-eu"), cwd=str(team)))
    assert first.exit_code == 0, first.stderr
    written = json.loads((team / "policies" / "config" / "prod-eu.json").read_text())
    assert written["cluster-replacement"] == {"enforcementLevel": "mandatory", "acknowledged": []}
    assert written["secure-defaults"] == {
        "enforcementLevel": "mandatory",
        "public_workspaces": [],
        "ssh_clusters": [],
    }
    assert written["quota-reservation"] == {"quotas": {"eastus": {}}}
    assert "python -m jobs quota --stack prod-eu --write policies/config/prod-eu.json" in first.stdout
    again, unknown = gates.run(
        Command("cli-init-config-again", ("init-config", "prod-eu"), cwd=str(team)),
        Command("cli-init-config-unknown", ("init-config", "nope"), cwd=str(team)),
    )
    assert again.exit_code == 2 and "exists; edit it, or pass --force" in again.stderr
    assert unknown.exit_code == 2 and "Traceback" not in unknown.stderr
