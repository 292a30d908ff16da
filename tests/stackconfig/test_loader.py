"""stackconfig/loader.py: the one stack-file reader reads YAML as the Pulumi CLI does (gopkg.in/yaml.v3 into
untyped values: pulumi/pulumi sdk/go/common/encoding/marshal.go, workspace/loaders.go; yaml.v3 resolve.go and
decode.go), reports a bad file in one line naming it, finds the `config:` keys of the namespace that are set
wrongly (encrypted, or under a near-miss namespace), reads the config inside a Pulumi program
(`from_pulumi_config`) as from the file, and loads the shipped stack files as the plans they document.

Expected values are written from yaml.v3's resolve table and decode rules (`resolve`: `strconv.ParseInt(plain,
0, 64)`, then `ParseUint`, then `strconv.ParseFloat` when the text matches `yamlStyleFloat`
`^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$`; an explicit `!!int` that does not resolve to an int
fails "cannot decode ... as a !!int") and Go's strconv (base 0: a leading "0" is octal), not from the reader.
"""

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
from stackconfig.loader import StackFileError, parse_yaml, read_config_block, stack_file

from .stackconfig_factory import good_raw

REPO = Path(__file__).resolve().parents[2]


# --- YAML as yaml.v3 reads it -------------------------------------------------------------------------------


# (scalar as written, what yaml.v3 decodes it to into interface{})
YAML_12 = [
    ("no", "no"),  # YAML 1.1 bool, a string in 1.2 (resolve table: only true/True/TRUE, false/...)
    ("yes", "yes"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("True", True),
    ("FALSE", False),
    ("30:00", "30:00"),  # base 60 "dropped in YAML 1.2, and purposefully unsupported"
    ("1:20:00", "1:20:00"),
    ("2026-01-01", "2026-01-01"),  # a timestamp into interface{} stays a string
    ("0o17", 15),
    ("0x1F", 31),
    ("0777", 511),  # 1.1-style octal, "still decoded by default in v3"
    ("1_800", 1800),
    ("-12", -12),
    ("1.5", 1.5),
    ("~", None),
    ("null", None),
    ("'0777'", "0777"),
]


@pytest.mark.parametrize(("written", "decoded"), YAML_12)
def test_scalars_decode_as_yaml_v3_does(written: str, decoded: object) -> None:
    assert parse_yaml(f"value: {written}\n", "Pulumi.x.yaml") == {"value": decoded}


def test_a_utf8_bom_is_stripped_as_the_cli_does() -> None:
    assert parse_yaml("\ufeffconfig: {a: 1}\n", "f") == {"config": {"a": 1}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "config:\n  azml-gpu:workspace:\n    name: a\n    name: b\n",
            "Pulumi.dev.yaml: mapping key 'name' at line 4 is already defined at line 3; keep one of them "
            "(the Pulumi CLI refuses a repeated key)",
        ),
        (
            "config:\n  azml-gpu:clusters: []\n  azml-gpu:clusters: []\n",
            "Pulumi.dev.yaml: mapping key 'azml-gpu:clusters' at line 3 is already defined at line 2; keep "
            "one of them (the Pulumi CLI refuses a repeated key)",
        ),
    ],
)
def test_a_repeated_key_is_refused_naming_both_lines(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text)
    with pytest.raises(StackFileError) as raised:
        read_config_block(path)
    assert str(raised.value) == message.replace("Pulumi.dev.yaml", str(path))


def test_the_same_key_in_two_mappings_is_fine() -> None:
    assert parse_yaml("a: {name: x}\nb: {name: y}\n", "f") == {"a": {"name": "x"}, "b": {"name": "y"}}


def test_a_tag_value_no_reaches_the_config_as_a_string(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.s.yaml"
    path.write_text("config:\n  azml-gpu:workspace:\n    tags:\n      env: no\n      window: 30:00\n")
    assert read_config_block(path) == {"azml-gpu:workspace": {"tags": {"env": "no", "window": "30:00"}}}


def test_syntax_errors_keep_the_one_line_form() -> None:
    with pytest.raises(ValueError) as raised:
        parse_yaml("a: [1\n", "F.yaml")
    assert str(raised.value) == (
        "F.yaml is not valid YAML at line 2, column 1: expected ',' or ']', but got '<stream end>'; fix the "
        "YAML syntax"
    )


@pytest.mark.parametrize(
    ("written", "decoded"),
    [
        ("07", 7),  # two digits, leading zero: octal 7
        ("00", 0),
        ("017", 15),
        ("-07", -7),
        ("08", 8.0),  # not octal: ParseInt fails, yamlStyleFloat matches -> float 8
        ("09", 9.0),
        ("-08", -8.0),
        ("0_9", 9.0),  # '_' dropped first
        ("0", 0),
        ("8", 8),
    ],
)
def test_leading_zero_numbers_decode_as_yaml_v3_does(written: str, decoded: object) -> None:
    value = parse_yaml(f"value: {written}\n", "Pulumi.x.yaml")["value"]
    assert (value, type(value)) == (decoded, type(decoded))


def test_a_leading_zero_decimal_in_a_stack_file_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    raw = good_raw()
    text = yaml.safe_dump({"config": {f"azml-gpu:{k}": v for k, v in raw.items()}}, sort_keys=False)
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text.replace("max_instances: 4", "max_instances: 08"))
    # yaml.v3 reads 08 as the float 8.0 (the Pulumi CLI passes that on): a config error naming the key, where
    # the reader used to stop at "invalid literal for int() with base 8: '08'", naming neither file nor key
    with pytest.raises(ConfigError) as info:
        load_stack_file(path)
    assert info.value.problems == [
        "azml-gpu:clusters[0].max_instances: expected a whole number, got 8.0; use a whole number, e.g. 4"
    ]


def test_an_explicit_int_tag_on_text_is_a_yaml_error_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("config:\n  azml-gpu:clusters:\n    - max_instances: !!int four\n")
    with pytest.raises(StackFileError) as info:
        read_config_block(path)
    message = str(info.value)
    assert message.startswith(f"{path} is not valid YAML at line 3, column 22: ")
    assert "'four'" in message and message.endswith("; fix the YAML syntax")


@pytest.mark.parametrize(
    ("text", "first", "again"),
    [
        # the same key one level deeper comes first: the message names the key of the same mapping
        (
            "config:\n  azml-gpu:workspace:\n    resource_group:\n      name: rg\n    name: a\n    name: b\n",
            5,
            6,
        ),
        # in a list item, the key after '- ' counts at the item's indent
        ("config:\n  azml-gpu:clusters:\n    - ssh:\n        name: x\n      name: a\n      name: b\n", 5, 6),
    ],
)
def test_a_repeated_key_names_the_first_line_of_its_own_mapping(
    tmp_path: Path, text: str, first: int, again: int
) -> None:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text)
    with pytest.raises(StackFileError) as info:
        read_config_block(path)
    assert str(info.value) == (
        f"{path}: mapping key 'name' at line {again} is already defined at line {first}; keep one of them "
        "(the Pulumi CLI refuses a repeated key)"
    )


def test_a_repeated_key_in_a_flow_mapping_names_the_mappings_line(tmp_path: Path) -> None:
    # no `name:` line to point at (both keys sit on one line): the line where the mapping starts, never a
    # `name:` line after the repeated key (line 4, another mapping's)
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text("config:\n  azml-gpu:locks: {}\n  azml-gpu:workspace: {name: a, name: b}\n  name: c\n")
    with pytest.raises(StackFileError) as info:
        read_config_block(path)
    assert str(info.value).startswith(f"{path}: mapping key 'name' at line 3 is already defined at line 3; ")


# --- the stack file and its namespace -----------------------------------------------------------------------


def test_stack_names_map_to_stack_files() -> None:
    assert stack_file("dev") == Path("Pulumi.dev.yaml")
    assert stack_file("configs/Pulumi.x.yaml") == Path("configs/Pulumi.x.yaml")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read {path}: No such file or directory; check the stack name or path"),
        (b"config: [unclosed\n", "{path} is not valid YAML at line 2, column 1"),
        (b"config:\n  azml-gpu:workspace: \xfe\n", "{path} is not UTF-8 text (byte 0xfe at offset 30)"),
        (b"encryptionsalt: x\n", "{path} has no 'config:' mapping"),
        (b"config:\n", "{path} has no 'config:' mapping"),
    ],
    ids=["missing-file", "invalid-yaml", "not-utf8", "no-config", "empty-config"],
)
def test_a_bad_stack_file_is_one_line_naming_the_file(
    tmp_path: Path, content: bytes | None, message: str
) -> None:
    """The one stack-file reader (read_config_block): one line naming the file and the fix, which
    load_stack_file reports as the config's one problem."""
    path = tmp_path / "Pulumi.x.yaml"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(StackFileError) as raised:
        read_config_block(path)
    assert str(raised.value).startswith(message.format(path=path))
    with pytest.raises(ConfigError) as invalid:
        load_stack_file(path)
    assert invalid.value.problems == [f"azml-gpu: {raised.value}"]


def _stack(tmp_path: Path, config: dict[str, Any]) -> Path:
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def test_a_secure_key_is_reported_alone_and_the_keys_after_it_are_read(tmp_path: Path) -> None:
    raw = good_raw()
    config = {"azml-gpu:locks": {"secure": "AAABADZ1bW15"}} | {
        f"azml-gpu:{k}": v for k, v in raw.items() if k != "locks"
    }
    with pytest.raises(ConfigError) as info:
        load_stack_file(_stack(tmp_path, config))
    assert info.value.problems == [
        "azml-gpu:locks: is an encrypted (secure) value, which this namespace does not use: nothing in it is "
        "secret (SSH takes a public key); set it as plain config"
    ]


@pytest.mark.parametrize(
    ("namespace", "hinted"),
    [
        ("azml-gpu-dev", True),  # SequenceMatcher ratio 16/20 = 0.8 exactly
        ("azmlgpu", True),
        ("azml-gpu-devx", False),  # 16/21, below 0.8
        ("azure-native", False),
        ("azml", False),
    ],
)
def test_a_near_miss_namespace_gets_a_did_you_mean(tmp_path: Path, namespace: str, hinted: bool) -> None:
    config = {f"azml-gpu:{k}": v for k, v in good_raw().items()} | {f"{namespace}:tags": "x"}
    path = _stack(tmp_path, config)
    if hinted:
        with pytest.raises(ConfigError) as info:
            load_stack_file(path)
        assert info.value.problems == [
            f"azml-gpu: config key '{namespace}:tags' is in namespace '{namespace}'; did you mean "
            "azml-gpu:tags?"
        ]
    else:
        assert load_stack_file(path).workspace.name == "ws-llm"


# --- from_pulumi_config: inside a mocked Pulumi program, what load_stack_file returns -----------------------


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


# --- the shipped stack files --------------------------------------------------------------------------------


def test_prod_stack_is_the_seed_reference_plan() -> None:
    config = load_stack_file(REPO / "Pulumi.prod.yaml")
    assert (config.workspace.name, config.workspace.resource_group.name, config.workspace.region) == (
        "ws-llm",
        "rg-train",
        "eastus",
    )
    main = config.cluster("h100-x4")
    assert (main.size, main.region, main.min_instances, main.max_instances) == (
        "Standard_ND96isr_H100_v5",
        "eastus",
        0,
        4,
    )
    # SSH decided at creation: off (no-public-IP nodes in a managed network, stackconfig.combinations [SSH]).
    assert (main.idle_time_before_scale_down, main.tier, main.ssh_enabled) == (300, "dedicated", False)
    others = [c for c in config.clusters if c.name != "h100-x4"]
    # The seed's second H100 cluster is in westus3: a private prod workspace (managed network) can't have a
    # cluster in another region, so it lives in the westus3 sibling stack (Pulumi.prod-westus3.yaml).
    assert not [c for c in others if c.size == "Standard_ND96isr_H100_v5"]
    sibling = load_stack_file(REPO / "Pulumi.prod-westus3.yaml")
    (second_h100,) = sibling.clusters
    assert (second_h100.name, second_h100.size, second_h100.region) == (
        "h100-wus3",
        "Standard_ND96isr_H100_v5",
        "westus3",
    )
    assert second_h100.max_instances > 1 and sibling.workspace.region == "westus3"
    spot = [c for c in others if c.tier == "low_priority"]
    assert len(spot) == 1 and spot[0].max_instances == 1
    # No locks next to a managed network (docs/azure-behaviour.md 17): the capacity stack carries them.
    assert not any(config.locks.model_dump().values())
    assert not any(sibling.locks.model_dump().values())
    # Private and identity-first by default.
    assert config.workspace.public_network_access == "Disabled"
    assert config.network.managed_enabled and config.network.private_endpoints is not None
    assert config.identity.identity_datastores and not config.identity.storage_shared_key_access
    assert not any(c.node_public_ip for c in config.clusters)


def test_capacity_stack_carries_the_cross_region_cluster_locks_and_ssh() -> None:
    """The mission's promises the private stacks can't carry (Pulumi.capacity.yaml says why)."""
    config = load_stack_file(REPO / "Pulumi.capacity.yaml")
    (cluster,) = config.clusters
    assert config.workspace.public_network_access == "Enabled" and not config.network.managed_enabled
    assert config.network.private_endpoints is None
    assert (config.workspace.region, cluster.region) == ("eastus", "westus3")
    assert cluster.ssh_enabled and cluster.node_public_ip
    assert config.locks.model_dump() == {
        "storage": True,
        "key_vault": False,  # the workspace identity's Key Vault Administrator sits on it
        "container_registry": True,
        "application_insights": True,
        "workspace": False,
    }


def test_dev_stack_is_a_small_cluster_with_a_long_idle_timer() -> None:
    config = load_stack_file(REPO / "Pulumi.dev.yaml")
    assert config.workspace.resource_group.name != "rg-train"
    (cluster,) = config.clusters
    assert (cluster.min_instances, cluster.max_instances, cluster.idle_time_before_scale_down) == (0, 1, 1800)
    assert cluster.ssh_enabled and cluster.region == config.workspace.region
    # Cheap and public: no private endpoint, no managed network (the reason is in the file's comment).
    assert config.workspace.public_network_access == "Enabled"
    assert config.network.managed is None and config.network.private_endpoints is None


def test_dev_can_be_recreated_the_same_day_prod_keeps_protection() -> None:
    """A deleted vault's name stays taken while soft-deleted; purge protection forbids freeing it early."""
    dev = load_stack_file(REPO / "Pulumi.dev.yaml").workspace
    prod = load_stack_file(REPO / "Pulumi.prod.yaml").workspace
    assert (dev.key_vault_purge_protection, dev.key_vault_soft_delete_days) == (False, 7)
    assert (prod.key_vault_purge_protection, prod.key_vault_soft_delete_days) == (True, 90)
