"""The conformance suite's machinery: one input (a stack file, a policy config, optionally a deployed state),
two judges (the real Pulumi engine, `python -m engine`; the offline gate, `python -m preflight`), one verdict
shape to compare.

A verdict is what a reviewer acts on: the outcome (`ok`, `policy`: a mandatory violation fails the
preview, `error`: the program, Check or the config failed), the mandatory and advisory violations by policy
and resource URN, and the URNs the plan replaces or deletes. A preview that stops on an error has shown the
advisories of the resources registered before it, in an order the gate does not replay: for `error`, the
advisories are left out. The gate's own `cluster-replacement` check is
not a pack policy (preflight/replacements.py): it has no engine counterpart and is left out.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from preflight import events
from preflight import pulumicli as run
from preflight.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
# The gate's own checks of an update against deployed state, which no pack policy can make (a policy sees no
# state): preflight/replacements.py and preflight/isolation.py. The engine's preview has nothing to compare.
GATE_ONLY = {"cluster-replacement", "managed-network-isolation"}


@dataclass(frozen=True)
class Verdict:
    outcome: str
    mandatory: tuple[tuple[str, str], ...]
    advisory: tuple[tuple[str, str], ...]
    replacements: tuple[str, ...]
    deletes: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    """One input. `edit` changes the parsed base stack file (its `config:` mapping); `raw` rewrites the
    text instead (YAML edge values); `policy` changes the base policy config; `update`: evaluated against
    the base stack as the engine deployed it (`pulumi up`, then `pulumi stack export --show-secrets`)."""

    id: str
    stack: str = "dev"
    edit: Callable[[dict[str, Any]], None] | None = None
    raw: Callable[[str], str] | None = None
    policy: Callable[[dict[str, Any]], None] | None = None
    update: bool = False
    expect: str | None = None  # the engine's outcome the case is built to reach (checked too)


def stack_text(stack: str, case: Case, base_edit: Callable[[dict[str, Any]], None] | None = None) -> str:
    text = (ROOT / f"Pulumi.{stack}.yaml").read_text()
    if case.raw is not None:
        return case.raw(text)
    if case.edit is None and base_edit is None:
        return text
    doc = yaml.safe_load(text)
    if base_edit is not None:
        base_edit(doc["config"])
    if case.edit is not None:
        case.edit(doc["config"])
    return yaml.safe_dump(doc, sort_keys=False, width=200)


def policy_config(stack: str, case: Case) -> dict[str, Any]:
    path = ROOT / "policies" / "config" / f"{stack}.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    config = copy.deepcopy(config)
    if case.policy is not None:
        case.policy(config)
    return config


def write_stack_file(ws: Workspace, text: str) -> None:
    """The case's stack file in the engine's workspace, keeping the `encryptionsalt` `stack init` wrote."""
    target = ws.project / f"Pulumi.{ws.stack}.yaml"
    salt = [line for line in target.read_text().splitlines() if line.startswith("encryptionsalt:")]
    target.write_text("\n".join(salt) + "\n" + text if salt else text)


def engine_verdict(ws: Workspace, text: str, policy_file: Path) -> tuple[Verdict, str]:
    write_stack_file(ws, text)
    log = ws.work / "events.jsonl"
    log.unlink(missing_ok=True)
    r = run.preview(ws, policy_file, events=log, capture=True)
    v = events.verdict(r.returncode, events.read(log))
    mandatory = tuple(sorted({(p, u) for p, u in v.mandatory}))
    outcome = "ok" if r.returncode == 0 else "policy" if mandatory else "error"
    return (
        Verdict(
            outcome,
            mandatory,
            () if outcome == "error" else tuple(sorted(set(v.advisory))),
            tuple(sorted({u for _, u in v.replacements})),
            tuple(sorted({u for _, u in v.deletes})),
        ),
        r.stdout + r.stderr,
    )


def gate_verdict(
    stack: str, stack_file: Path, policy_file: Path, state: Path | None
) -> tuple[Verdict, dict[str, Any] | str]:
    argv = [sys.executable, "-m", "preflight", stack, "--json", "--config-file", str(stack_file)]
    argv += ["--policy-config", str(policy_file)]
    if state is not None:
        argv += ["--state", str(state)]
    r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(r.stdout)
    except ValueError:
        return Verdict("error", (), (), (), ()), r.stdout + r.stderr
    evaluations = report.get("evaluations") or []
    kind = "update" if state is not None else "first-deploy"
    found = [e for e in evaluations if e.get("kind") == kind]
    if r.returncode == 2 or not found:
        return Verdict("error", (), (), (), ()), report
    e = found[0]
    pack = [v for v in e.get("violations", []) if v["policy"] not in GATE_ONLY]
    mandatory = tuple(sorted({(v["policy"], v["urn"]) for v in pack if v["enforcement"] in events.MANDATORY}))
    advisory = tuple(
        sorted({(v["policy"], v["urn"]) for v in pack if v["enforcement"] not in events.MANDATORY})
    )
    return (
        Verdict(
            "policy" if mandatory else "ok",
            mandatory,
            advisory,
            tuple(sorted({row["urn"] for row in e.get("replacements", [])})),
            tuple(sorted(set(e.get("deletes", [])))),
        ),
        report,
    )
