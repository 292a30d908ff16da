"""from_pulumi_config() inside a mocked Pulumi program returns what load_stack_file() returns."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from stackconfig import ConfigError, from_pulumi_config, load_stack_file

REPO = Path(__file__).resolve().parents[2]


class _Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return f"{args.name}-id", args.inputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        return {}, None


def _as_pulumi_config(path: Path) -> dict[str, str]:
    """Stack file config the way the engine hands it to a program: full keys, structured values as JSON."""
    config = yaml.safe_load(path.read_text())["config"]
    return {key: value if isinstance(value, str) else json.dumps(value) for key, value in config.items()}


@pytest.fixture
def program(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("PULUMI_CONFIG", raising=False)
    loop = asyncio.new_event_loop()  # whatever earlier tests did with this thread's loop
    asyncio.set_event_loop(loop)
    pulumi.runtime.set_mocks(_Mocks(), project="azml-gpu", stack="test", preview=False)
    yield
    pulumi.runtime.set_all_config({})
    pulumi.runtime.settings.ROOT.set(None)  # set_mocks made a root Stack: leave none behind
    asyncio.set_event_loop(None)
    loop.close()


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_same_model_as_the_stack_file(program: None, stack: str) -> None:
    path = REPO / f"Pulumi.{stack}.yaml"
    pulumi.runtime.set_all_config(_as_pulumi_config(path))

    @pulumi.runtime.test
    def check() -> None:
        assert from_pulumi_config() == load_stack_file(path)

    check()


def test_unknown_namespace_keys_are_reported(program: None) -> None:
    config = _as_pulumi_config(REPO / "Pulumi.dev.yaml")
    config["azml-gpu:lock"] = json.dumps({"storage": True})
    pulumi.runtime.set_all_config(config)
    with pytest.raises(ConfigError) as info:
        from_pulumi_config()
    assert info.value.problems == ["azml-gpu:lock: unknown key; did you mean locks?"]


def test_keys_passed_by_the_language_host_in_pulumi_config_are_seen(
    program: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _as_pulumi_config(REPO / "Pulumi.dev.yaml")
    clusters = json.loads(config.pop("azml-gpu:clusters"))
    clusters[0]["max_instance"] = 2
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"azml-gpu:clusters": json.dumps(clusters)}))
    pulumi.runtime.set_all_config(config)
    with pytest.raises(ConfigError) as info:
        from_pulumi_config()
    assert info.value.problems == [
        "azml-gpu:clusters[0].max_instance: unknown key; did you mean max_instances?"
    ]


def test_a_missing_namespace_reports_the_required_keys(program: None) -> None:
    pulumi.runtime.set_all_config({"azure-native:location": "eastus"})
    with pytest.raises(ConfigError) as info:
        from_pulumi_config()
    assert [p.split(": ", 1)[0] for p in info.value.problems] == ["azml-gpu:workspace", "azml-gpu:clusters"]
