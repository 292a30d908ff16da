"""The engine as judge of the gate's reading of its events: for a corpus of inputs (the shipped stacks, each
policy's violation, the policy config forms, duplicate URNs, and updates with a replacement, cascades of
replacements, a delete, a loosened network; the foreign program), the CLI itself previews the gate's own
workspaces again (`pulumi preview --json`: its steps, change summary and errors; plain `pulumi preview`: its
policy violations, which the JSON display leaves out) and what the gate reported for that evaluation must be
what the CLI printed: the engine's exit code, the violations by level, policy, resource and message, every
step that is not a `same`, the replaced and deleted resources, the errors. The gate's own checks of an update
(cluster-replacement, managed-network-isolation: no policy sees the state) have no counterpart in the CLI's
output and are left out of the comparison, but must be the only difference between the gate's verdict and the
engine's.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from preflight.events import REPLACE_OPS, urn_name, urn_type
from tests.integration.gate.runner import Gates, Outcome
from tests.integration.gate.specs import JUDGED

GATE_ONLY = {"cluster-replacement", "managed-network-isolation"}
#: The engine's closing words for a run that failed for a reason reported before (preflight.gate).
CLOSING = {"preview failed", "Resource monitor has terminated, shutting down"}
PROVIDER = "pulumi:providers:"
POLICY_LINE = re.compile(
    r"^ {8}- \[(?P<level>[a-z]+)\]\s+(?P<policy>\S+)\s+\((?P<type>[^ ]+): (?P<name>[^ ]+)\)$"
)
#: A resource the engine deletes before the one it depends on is replaced, and that the program no longer
#: declares (it has a new name): `delete-replaced`, then `remove-pending-replace`, with no replacement. The
#: JSON display leaves it out; the plain display's row says `delete original`.
DELETE_ORIGINAL = re.compile(r"^ -- (?P<type>\S+) (?P<name>\S+) delete original\s*$")
CASES = [
    pytest.param(
        spec.name,
        kind,
        id=f"{spec.name}-{kind}",
    )
    for spec in JUDGED
    for kind in spec.judge
]


@pytest.fixture(scope="module")
def outcomes(gates: Gates) -> dict[str, Outcome]:
    return {o.name: o for o in gates.run(*JUDGED)}


def cli_policies(text: str) -> list[tuple[str, str, str, str, str]]:
    """(level, policy, resource type, resource name, message) of each violation in the `Policies:` section of
    a plain `pulumi preview` (pkg/backend/display: `- [level]  policy  (type: name)`, then the policy's
    description and the message, indented)."""
    lines = text.splitlines()
    if "Policies:" not in lines:
        return []
    found: list[list[Any]] = []
    for line in lines[lines.index("Policies:") + 1 :]:
        if not line.startswith("    "):
            break
        if m := POLICY_LINE.match(line):
            found.append([m["level"], m["policy"], m["type"], m["name"], []])
        elif found and line.startswith(" " * 10):
            found[-1][4].append(line[10:])
    return sorted((lvl, pol, typ, name, "\n".join(body[1:])) for lvl, pol, typ, name, body in found)


def cli_ops(digest: dict[str, Any], text: str, urns: list[str]) -> dict[str, str]:
    """URN -> op of every step the JSON display shows (it leaves out sames, but for the stack, and
    providers), a replacement's steps folded into `replace` as the gate folds them; and `delete` for each
    `delete original` row of the plain display (`DELETE_ORIGINAL`) of a resource the JSON display does not
    show, whose URN is the one of `urns` with its type and name."""
    ops: dict[str, str] = {}
    for step in digest.get("steps", []):
        op = "replace" if step["op"] in REPLACE_OPS else step["op"]
        ops[step["urn"]] = "replace" if ops.get(step["urn"]) == "replace" else op
    for line in text.splitlines():
        if m := DELETE_ORIGINAL.match(line):
            (urn,) = [u for u in urns if urn_type(u) == m["type"] and urn_name(u) == m["name"]]
            ops.setdefault(urn, "delete")  # a replacement's own delete shows the same row
    return ops


def cli_errors(digest: dict[str, Any]) -> list[str]:
    messages = [d["message"].strip() for d in digest.get("diagnostics", []) if d.get("severity") == "error"]
    return [m.removeprefix("error: ") for m in messages if m.removeprefix("error: ") not in CLOSING]


def gate_violations(evaluation: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    return sorted(
        (v["enforcement"], v["policy"], urn_type(v["urn"]), urn_name(v["urn"]), v["message"])
        for v in evaluation["violations"]
        if v["policy"] not in GATE_ONLY
    )


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_the_gate_reports_what_the_cli_printed(outcomes: dict[str, Outcome], name: str, kind: str) -> None:
    outcome = outcomes[name]
    judged = outcome.judged[kind]
    digest = json.loads(judged["json_stdout"])
    run = outcome.runs[kind]
    evaluation = outcome.evaluation(kind)
    policies = cli_policies(judged["text"])

    # The CLI's exit code, the same in both displays, is the one the gate read.
    assert judged["json_exit"] == judged["text_exit"] == run["exit_code"] == evaluation["engine_exit_code"]
    blocking = [p for p in policies if p[0] in ("mandatory", "remediate")]
    errors = cli_errors(digest)
    assert (run["exit_code"] != 0) == bool(blocking or errors)

    # Errors: each of the engine's is the gate's, and is reported (exit 2).
    assert [e for e in run["errors"] if e not in CLOSING] == errors
    for error in errors:
        assert outcome.exit_code == 2 and any(error in line for line in outcome.errors), (
            error,
            outcome.errors,
        )

    if errors:
        # A preview the engine stopped shows what it registered before the error, which depends on the order
        # the program's registrations reached it: another run stops at another point. Nothing else compares.
        return

    # Violations: the engine's, level, policy, resource and message.
    assert gate_violations(evaluation) == policies

    # Steps: every change per URN, and how many resources stay the same (all but the providers).
    ops = cli_ops(digest, judged["text"], list(run["ops"]))
    changed = {u: op for u, op in run["ops"].items() if op != "same" and PROVIDER not in u}
    assert changed == {u: op for u, op in ops.items() if op != "same"}
    same = sum(op == "same" for u, op in run["ops"].items() if PROVIDER not in u)
    assert same == digest["changeSummary"].get("same", 0)
    assert sorted(r["urn"] for r in evaluation["replacements"]) == sorted(
        u for u, op in ops.items() if op == "replace"
    )
    deleted = [u for u, op in ops.items() if op == "delete" and run["custom"][u] and PROVIDER not in u]
    assert evaluation["deletes"] == sorted(deleted)

    # The verdict: the engine's, but for the gate's own checks of an update.
    own = [
        v for v in evaluation["violations"] if v["policy"] in GATE_ONLY and v["enforcement"] == "mandatory"
    ]
    assert evaluation["exit_code"] == int(bool(blocking or own))


def test_the_corpus_shows_every_kind_of_finding(outcomes: dict[str, Outcome]) -> None:
    """The judge is not comparing empty outputs: across the corpus the CLI printed mandatory and advisory
    violations, replacements, deletes, creates, updates and errors, and the gate's own checks fired."""
    levels, ops, errors, own = set(), set(), 0, set()
    for name, kind in ((c.values[0], c.values[1]) for c in CASES):
        judged = outcomes[name].judged[kind]
        levels |= {p[0] for p in cli_policies(judged["text"])}
        digest = json.loads(judged["json_stdout"])
        ops |= set(cli_ops(digest, judged["text"], list(outcomes[name].runs[kind]["ops"])).values())
        errors += len(cli_errors(digest))
        evaluation = outcomes[name].evaluation(kind)
        own |= {v["policy"] for v in evaluation["violations"] if v["policy"] in GATE_ONLY}
    assert {"mandatory", "advisory"} <= levels
    assert {"create", "update", "replace", "delete", "same"} <= ops
    assert errors >= 2
    assert own == GATE_ONLY
