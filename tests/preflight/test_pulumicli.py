"""preflight/pulumicli.py: which Pulumi CLI the gate runs (AZML_GPU_PULUMI, then a supported one on PATH, then
the one `make engine` built) and what it says when there is none. The CLIs here are stand-ins that answer
`pulumi version` as the real one does (`v3.274.1` on stdout)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from preflight import pulumicli
from preflight.versions import PULUMI_VERSION


def fake_cli(folder: Path, version: str | None, exit_code: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cli = folder / "pulumi"
    said = f"echo v{version}" if version else "echo not a version"
    cli.write_text(f'#!/bin/sh\n[ "$1" = version ] && {said} && exit {exit_code}\nexit 3\n')
    cli.chmod(0o755)
    return cli


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No CLI anywhere: an empty PATH folder (plus /bin for sh), an empty builder cache."""
    monkeypatch.setenv("PATH", f"{tmp_path / 'path'}:/bin:/usr/bin")
    monkeypatch.setenv("AZML_ENGINE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(pulumicli.ENV_CLI, raising=False)
    (tmp_path / "path").mkdir()
    return tmp_path


def built(machine: Path, version: str = PULUMI_VERSION, key: str = "abc123") -> Path:
    return fake_cli(machine / "cache" / f"pulumi-v{PULUMI_VERSION}-{key}" / "bin", version)


def test_no_cli_anywhere_says_how_to_install_one(machine: Path) -> None:
    with pytest.raises(pulumicli.CliMissing) as missing:
        pulumicli.find()
    message = str(missing.value)
    assert message.startswith("no Pulumi CLI to run (no `pulumi` on PATH): install the Pulumi CLI 3.274.1")
    assert "https://get.pulumi.com" in message and "AZML_GPU_PULUMI" in message and "`make engine`" in message


def test_a_supported_cli_on_path_is_used(machine: Path) -> None:
    on_path = fake_cli(machine / "path", "3.280.0")
    built(machine)
    cli = pulumicli.find()
    assert (cli.path, cli.version, cli.source, cli.notes) == (on_path, "3.280.0", "PATH", ())


@pytest.mark.parametrize("version", ["3.274.0", "4.0.0", None])
def test_an_unsupported_cli_on_path_is_passed_over_with_a_note(machine: Path, version: str | None) -> None:
    fake_cli(machine / "path", version)
    own = built(machine)
    cli = pulumicli.find()
    assert (cli.path, cli.source) == (own, "built by make engine")
    shown = version or "a version it does not say"
    assert cli.notes == (
        f"the Pulumi CLI on PATH ({machine / 'path' / 'pulumi'}) is {shown}; the gate needs 3.274.1 or "
        "later, "
        "below 4.0.0",
    )


def test_an_unsupported_cli_and_nothing_built_is_named_in_the_error(machine: Path) -> None:
    fake_cli(machine / "path", "3.100.0")
    with pytest.raises(
        pulumicli.CliMissing, match=r"\(the Pulumi CLI on PATH .* is 3\.100\.0; the gate needs"
    ):
        pulumicli.find()


def test_the_newest_build_is_used_and_a_build_of_another_version_is_not(machine: Path) -> None:
    old = built(machine, key="aaa")
    new = built(machine, key="bbb")
    os.utime(old, (1, 1))
    fake_cli(machine / "cache" / "pulumi-v3.200.0-ccc" / "bin", "3.200.0")
    assert pulumicli.find().path == new


def test_an_explicit_cli_is_used_whatever_its_version_with_a_note(
    machine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = fake_cli(machine / "mine", "3.100.0")
    fake_cli(machine / "path", "3.280.0")
    monkeypatch.setenv(pulumicli.ENV_CLI, str(chosen))
    cli = pulumicli.find()
    assert (cli.path, cli.version, cli.source) == (chosen, "3.100.0", "AZML_GPU_PULUMI")
    assert cli.notes == (
        "AZML_GPU_PULUMI names Pulumi CLI 3.100.0, outside the tested range (3.274.1 or later, below 4.0.0)",
    )


@pytest.mark.parametrize("what", ["missing", "no version", "fails"])
def test_an_explicit_path_that_is_no_cli_is_an_error_naming_the_variable(
    machine: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    target = machine / "mine" / "pulumi"
    if what == "no version":
        fake_cli(machine / "mine", None)
    elif what == "fails":
        fake_cli(machine / "mine", PULUMI_VERSION, exit_code=1)
    monkeypatch.setenv(pulumicli.ENV_CLI, str(target))
    with pytest.raises(pulumicli.CliMissing) as missing:
        pulumicli.find()
    assert str(missing.value).startswith(
        f"AZML_GPU_PULUMI={target}: not a Pulumi CLI that answers `pulumi version`"
    )


def test_the_cache_is_where_the_builder_writes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from doubles.pulumicli import build

    monkeypatch.delenv("AZML_ENGINE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert pulumicli.cache_root() == tmp_path / "azml-gpu" / "engine"
    assert build.pulumi_path().parent.parent.parent == pulumicli.cache_root()
    assert build.pulumi_path().parent.parent.name.startswith(f"pulumi-v{PULUMI_VERSION}-")


def test_run_passes_the_program_address_and_the_event_log(tmp_path: Path) -> None:
    echo = tmp_path / "pulumi"
    echo.write_text('#!/bin/sh\necho "$@"\n')
    echo.chmod(0o755)
    cli = pulumicli.Cli(echo, PULUMI_VERSION, "PATH")
    done = cli.run(
        ["preview"], cwd=tmp_path, env={"PATH": "/bin"}, client="127.0.0.1:1", event_log=tmp_path / "e"
    )
    assert done.stdout.split() == [
        "preview", "--non-interactive", "--client", "127.0.0.1:1", "--exec-kind", "auto.inline",
        "--event-log", str(tmp_path / "e"),
    ]  # fmt: skip
