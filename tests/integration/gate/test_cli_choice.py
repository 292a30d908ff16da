"""Which Pulumi CLI the gate runs (preflight.pulumicli.find), and the same input giving the same output.

- A supported CLI first on PATH is the one used (engine.source PATH).
- An unsupported one on PATH (3.100.0) is passed over for the one `make engine` built, with a note saying so.
- None at all: exit 2 with the install instructions, no traceback.
Both runs that evaluate take the same input (two clusters in one quota pool: each pool's message lists both in
one order, whatever order the program registered them), in processes with different hash seeds, and an
in-process run makes a third: the reports are the same but for timings and the CLI that ran.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from preflight import pulumicli
from preflight.versions import PULUMI_VERSION
from tests.integration.gate.runner import Command, Gates, Outcome, Spec
from tests.integration.gate.specs import FIXTURES

OVER_QUOTA = FIXTURES / "over-quota"


def two_clusters() -> str:
    document = yaml.safe_load((OVER_QUOTA / "Pulumi.over-quota.yaml").read_text())
    clusters = document["config"]["azml-gpu:clusters"]
    clusters.append(dict(clusters[0], name="h100-x2", max_instances=2))
    return yaml.safe_dump(document, sort_keys=False, width=200)


IN_PROCESS = Spec(
    "over-quota-two-clusters",
    "over-quota",
    stack_text=two_clusters(),
    policy_path=str(OVER_QUOTA / "policy.json"),
    on="2026-11-30",
)


@pytest.fixture(scope="module")
def runs(gates: Gates, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    folder = tmp_path_factory.mktemp("cli-choice")
    built = pulumicli.built()
    assert built, "no CLI built by `make engine`"
    supported, old, none, empty = (folder / name for name in ("supported", "old", "none", "empty-cache"))
    for d in (supported, old, none, empty):
        d.mkdir()
    (supported / "pulumi").symlink_to(built[0])
    fake = old / "pulumi"
    fake.write_text("#!/bin/sh\necho v3.100.0\n")
    fake.chmod(0o755)
    system = "/usr/bin:/bin"
    assert shutil.which("pulumi", path=system) is None
    stack_file = folder / "Pulumi.over-quota.yaml"
    stack_file.write_text(IN_PROCESS.stack_text or "")
    args = ("over-quota", "--json", "--date", "2026-11-30", "--config-file", str(stack_file))
    args += ("--policy-config", str(OVER_QUOTA / "policy.json"))
    base = (("AZML_GPU_PULUMI", None),)
    path = os.environ["PATH"]
    commands = [
        Command("cli-on-path", args, (*base, ("PATH", f"{supported}:{path}"), ("PYTHONHASHSEED", "1"))),
        Command("cli-old-on-path", args, (*base, ("PATH", f"{old}:{path}"), ("PYTHONHASHSEED", "2"))),
        Command("cli-none", args, (*base, ("PATH", f"{none}:{system}"), ("AZML_ENGINE_CACHE", str(empty)))),
        Command(
            "cli-none-but-old", args, (*base, ("PATH", f"{old}:{system}"), ("AZML_ENGINE_CACHE", str(empty)))
        ),
    ]
    done = {o.name: o for o in gates.run(*commands, IN_PROCESS)}
    done["folders"] = Outcome("folders", 0, str(folder))
    return done


def comparable(document: dict[str, Any]) -> dict[str, Any]:
    """The report without what may differ between two runs of one input: the seconds, and the CLI."""
    document = json.loads(json.dumps(document))
    document.pop("engine")
    document["policy_config"].pop("notes")
    for evaluation in document["evaluations"]:
        evaluation.pop("seconds")
        evaluation["state"] = re.sub(r"pulumi up, [0-9.]+ s", "pulumi up, N s", evaluation["state"])
    return document


def test_a_supported_cli_on_path_is_used(runs: dict[str, Outcome]) -> None:
    run = runs["cli-on-path"]
    assert run.exit_code == 1, run.stderr[-2000:]
    engine = run.json["engine"]
    folder = Path(runs["folders"].folder)
    assert engine == {
        "path": str(folder / "supported" / "pulumi"),
        "version": PULUMI_VERSION,
        "source": "PATH",
        "notes": [],
    }
    assert run.json["policy_config"]["notes"] == []
    assert f"preflight: Pulumi CLI {PULUMI_VERSION} (PATH: {folder / 'supported' / 'pulumi'})" in run.stderr


def test_an_unsupported_cli_on_path_is_passed_over_for_the_built_one(runs: dict[str, Outcome]) -> None:
    run = runs["cli-old-on-path"]
    assert run.exit_code == 1, run.stderr[-2000:]
    engine = run.json["engine"]
    old = Path(runs["folders"].folder) / "old" / "pulumi"
    note = f"the Pulumi CLI on PATH ({old}) is 3.100.0; the gate needs 3.274.1 or later, below 4.0.0"
    assert (engine["source"], engine["version"], engine["notes"]) == (
        "built by make engine",
        PULUMI_VERSION,
        [note],
    )
    assert engine["path"] == str(pulumicli.built()[0])
    assert run.json["policy_config"]["notes"] == [note]


def test_no_cli_at_all_is_exit_2_with_the_install_instructions(runs: dict[str, Outcome]) -> None:
    old = Path(runs["folders"].folder) / "old" / "pulumi"
    for name, tried in (
        ("cli-none", "no `pulumi` on PATH"),
        (
            "cli-none-but-old",
            f"the Pulumi CLI on PATH ({old}) is 3.100.0; the gate needs 3.274.1 or later, below 4.0.0",
        ),
    ):
        run = runs[name]
        assert run.exit_code == 2 and "Traceback" not in run.stderr, name
        assert run.json == {
            "stack": "over-quota",
            "errors": [f"no Pulumi CLI to run ({tried}): {pulumicli.INSTALL}"],
            "summary": {"exit_code": 2},
        }
        assert (
            f"curl -fsSL https://get.pulumi.com | sh -s -- --version {PULUMI_VERSION}"
            in run.json["errors"][0]
        )


def test_the_same_input_gives_the_same_report(runs: dict[str, Outcome]) -> None:
    """Three runs, two CLIs, three processes with their own hash seeds: one report. The two clusters share
    their pools, so each pool is one violation listing both (2 mandatory, merged over the evaluations)."""
    reports = [runs["cli-on-path"].json, runs["cli-old-on-path"].json, runs[IN_PROCESS.name].document]
    assert comparable(reports[0]) == comparable(reports[1]) == comparable(reports[2])
    violations = reports[0]["violations"]
    assert [(v["policy"], v["enforcement"], v["evaluations"]) for v in violations] == [
        ("quota-reservation", "mandatory", ["first-deploy", "update"])
    ] * 2
    for v in violations:
        assert "h100-x2 (2 x 96 vCPUs of Standard_ND96isr_H100_v5), h100-x4 (4 x 96 vCPUs of" in v["message"]


def test_the_review_form_of_the_same_report(runs: dict[str, Outcome]) -> None:
    outcome = runs[IN_PROCESS.name]
    verdict = "FAIL: 2 mandatory violation(s), 0 advisory (failed: first-deploy, update); "
    assert outcome.text.endswith(verdict + "`pulumi up` would be blocked.\n")
    lines = outcome.markdown.splitlines()
    assert lines[0] == "## Policy gate: FAIL for stack `over-quota`"
    assert lines[2] == "2 mandatory, 0 advisory violation(s);"
    assert lines[3].startswith("policy config `")
    assert (
        sum(line.startswith("- **quota-reservation** on the stack (first-deploy, update):") for line in lines)
        == 2
    )
    assert max(len(line) for line in lines if line.startswith("  ")) <= 110  # the messages, wrapped
    assert "urn:pulumi" not in outcome.markdown


def test_the_review_form_has_short_lines(runs: dict[str, Outcome]) -> None:
    lines = runs[IN_PROCESS.name].markdown.splitlines()
    assert max(len(line) for line in lines if not line.startswith("|")) <= 110
