"""doubles/pulumicli/build.py: the CLI build is cached by version and by the Go module's checksums, where the
gate looks for it (preflight.pulumicli.cache_root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from doubles.pulumicli import build
from preflight import pulumicli


def test_build_cache_is_keyed_by_version_and_module_checksums(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AZML_ENGINE_CACHE", str(tmp_path))
    key = build.cache_key()
    assert key.startswith("pulumi-v3.274.1-")
    assert build.pulumi_path() == tmp_path / key / "bin" / "pulumi"
    assert build.pulumi_path().parents[2] == pulumicli.cache_root()
    go = tmp_path / "go"
    go.mkdir()
    for name in ("go.mod", "go.sum"):
        (go / name).write_bytes((build.GO_MODULE / name).read_bytes())
    monkeypatch.setattr(build, "GO_MODULE", go)
    assert build.cache_key() == key  # same files, same key
    (go / "go.sum").write_text((go / "go.sum").read_text() + "example.com/x v1.0.0 h1:x\n")
    assert build.cache_key() != key


def test_a_cached_build_is_found_by_the_gate(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AZML_ENGINE_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", "/bin:/usr/bin")
    monkeypatch.delenv(pulumicli.ENV_CLI, raising=False)
    cli = build.pulumi_path()
    cli.parent.mkdir(parents=True)
    cli.write_text("#!/bin/sh\necho v3.274.1\n")
    cli.chmod(0o755)
    found = pulumicli.find()
    assert (found.path, found.source) == (cli, "built by make engine")
