"""Invalid config: every problem at once, nothing declared, a clean message (no traceback)."""

from __future__ import annotations

from components_helpers import ns, variant

from preflight.program import run_program


def test_invalid_config_declares_nothing_and_lists_every_problem(stack_configs):
    base = stack_configs["prod"]
    clusters = [dict(c) for c in ns(base, "clusters")]
    clusters[0]["max_instances"] = 0
    clusters[1]["idle_time_before_scale_down"] = "5m"
    ws = dict(ns(base, "workspace"), region="mars")
    result = run_program("prod", config=variant(base, workspace=ws, clusters=clusters))

    assert not result.ok
    assert [r.type for r in result.resources] == ["pulumi:pulumi:Stack"]  # nothing else was declared
    assert result.declared == [] and result.outputs == {}
    assert len(result.problems) == 3, result.problems
    keys = sorted(p.split(":", 2)[1] for p in result.problems)
    assert keys == [
        "clusters[0].max_instances",
        "clusters[1].idle_time_before_scale_down",
        "workspace.region",
    ]
    assert all(p.startswith("azml-gpu:") for p in result.problems)
    # The RunError message the engine prints: every problem, the file to fix, no traceback.
    assert result.error.startswith("invalid stack config (3 problems); nothing was declared")
    for p in result.problems:
        assert p in result.error
    assert "Pulumi.prod.yaml" in result.error and "Traceback" not in result.error


def test_missing_workspace_is_one_problem(stack_configs):
    config = {k: v for k, v in stack_configs["dev"].items() if k != "azml-gpu:workspace"}
    result = run_program("dev", config=config)
    assert result.declared == []
    assert len(result.problems) == 1 and result.problems[0].startswith("azml-gpu:workspace")


def test_unknown_stack_file_is_a_problem_not_an_exception(tmp_path):
    result = run_program("nosuch", root=tmp_path)
    assert not result.ok and result.resources == []
    assert "Pulumi.STACK.yaml" in result.problems[0] and "nosuch" in result.problems[0]
