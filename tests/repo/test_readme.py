"""The README stays true: its commands exist, its example program runs, its example verdict is the gate's."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)


def test_the_two_commands_and_the_contributor_loop_are_make_targets() -> None:
    makefile = (ROOT / "Makefile").read_text()
    for target in ("preview", "test", "check", "setup", "engine"):
        assert re.search(rf"^{target}:", makefile, re.M), target
    assert "make preview" in _blocks("sh")[0] and "make test" in _blocks("sh")[0]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_the_readme_is_for_users_and_short() -> None:
    assert len(README.splitlines()) <= 200
    for link in re.findall(r"\]\(([^)#]+)\)", README):
        if not link.startswith("http"):
            assert (ROOT / link).exists(), link


def test_the_example_verdict_is_the_policys_own_message() -> None:
    """The verdict shown is multi-node-requires-rdma's message for the example's cluster, word for word (the
    gate's markdown wraps it at 100 characters)."""
    from policies import multi_node_requires_rdma as policy
    from tests.policies.policies_helpers import MAX, SIZE, cluster, verdict

    [shown] = _blocks("text")
    assert f"**{policy.NAME}** on a100-x2 (Compute) (first-deploy, update):" in shown
    wrapped = shown.split("(first-deploy, update):\n")[1]
    text = " ".join(line.strip() for line in wrapped.splitlines())
    [message] = verdict(policy, cluster(**{SIZE: "Standard_NC96ads_A100_v4", MAX: 2}))
    assert text == message
