"""policies/ alone is the pack (what `pulumi policy publish` uploads): a copy of the folder under another
name,
next to nothing of the repository but its own virtualenv, judges a stack as the repository's pack does, under
the real engine (the gate takes `<program>/policies` as the pack when it holds a PulumiPolicy.yaml)."""

from __future__ import annotations

import shutil
from pathlib import Path

from preflight.gate import evaluate

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "stacks" / "no-rdma"


def _verdict(result) -> list[tuple[str, str, str, str]]:
    return sorted((v.policy, v.enforcement, v.urn, v.message) for v in result.violations)


def test_a_copy_of_policies_alone_judges_a_stack_as_the_repository_pack_does(tmp_path: Path) -> None:
    program = tmp_path / "program"
    program.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        (program / name).symlink_to(ROOT / name)
    shutil.copytree(
        ROOT / "policies", program / "policies", ignore=shutil.ignore_patterns(".venv", "__pycache__")
    )
    (program / "policies" / ".venv").symlink_to(ROOT / "policies" / ".venv")
    stack_file, policy = FIXTURE / "Pulumi.no-rdma.yaml", FIXTURE / "policy.json"
    from_copy = evaluate("no-rdma", root=program, config_file=stack_file, policy_config_path=policy)
    from_repository = evaluate("no-rdma", root=ROOT, config_file=stack_file, policy_config_path=policy)
    assert from_copy.errors == [] and from_copy.exit_code == 1
    assert ("multi-node-requires-rdma", "mandatory") in {(p, e) for p, e, _, _ in _verdict(from_copy)}
    assert _verdict(from_copy) == _verdict(from_repository)
