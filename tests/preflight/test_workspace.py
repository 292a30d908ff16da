"""preflight/workspace.py: the policy pack launcher the CLI is given as `--policy-pack` (what the Python
language
host's RunPlugin runs for a pack: `python -u -m pulumi.policy <engine> <pack folder>` in the pack folder), and
the interpreter it uses. Creating a workspace needs the CLI: tests/integration/gate."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from preflight.workspace import pack_python, write_pack_launcher


def test_the_pack_runs_in_its_own_virtualenv_when_it_has_one(tmp_path: Path) -> None:
    assert pack_python(tmp_path) == Path(sys.executable)
    own = tmp_path / ".venv" / "bin" / "python"
    own.parent.mkdir(parents=True)
    own.write_text("")
    assert pack_python(tmp_path) == own


def test_the_launcher_runs_pulumi_policy_in_the_pack_folder_with_the_engines_arguments(
    tmp_path: Path,
) -> None:
    pack = tmp_path / "my pack"  # a space: every path is quoted
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.1.0\n")
    shim = pack / ".venv" / "bin" / "python"
    shim.parent.mkdir(parents=True)
    # a stand-in interpreter that prints where it runs and what it was given
    shim.write_text('#!/bin/sh\npwd\nfor a in "$@"; do echo "[$a]"; done\n')
    shim.chmod(0o755)
    launcher = write_pack_launcher(tmp_path / "work", pack)
    assert launcher == tmp_path / "work" / "policy-pack" / "azml-gpu-policies" and os.access(
        launcher, os.X_OK
    )
    # "It's valid for a binary to also ship a PulumiPolicy.yaml": the pack's own, for its name and version
    assert (launcher.parent / "PulumiPolicy.yaml").resolve() == (pack / "PulumiPolicy.yaml").resolve()
    out = subprocess.run([str(launcher), "127.0.0.1:5000"], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    assert lines[0] == str(pack)
    assert lines[1:3] == ["[-u]", "[-c]"] and "runpy.run_module('pulumi.policy'" in lines[3]
    assert lines[4:] == ["[127.0.0.1:5000]", f"[{pack}]"]
    # a second launcher in the same folder keeps the manifest link
    assert write_pack_launcher(tmp_path / "work", pack) == launcher


def test_the_launched_pack_ends_at_once_on_the_engines_sigint(tmp_path: Path) -> None:
    """The engine ends a plugin with SIGINT to its process group and waits up to 5 s; the pack exits at once
    (a stand-in pulumi.policy module that would otherwise sleep)."""
    pack = tmp_path / "pack"
    (pack / "pulumi" / "policy").mkdir(parents=True)
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\n")
    (pack / "pulumi" / "__init__.py").write_text("")
    (pack / "pulumi" / "policy" / "__init__.py").write_text("")
    (pack / "pulumi" / "policy" / "__main__.py").write_text(
        "import time\nprint('up', flush=True)\ntime.sleep(30)\n"
    )
    launcher = write_pack_launcher(tmp_path / "work", pack)
    proc = subprocess.Popen([str(launcher), "x"], stdout=subprocess.PIPE, text=True, cwd=pack)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "up"
    started = time.monotonic()
    proc.send_signal(2)
    assert proc.wait(timeout=5) == 0
    assert time.monotonic() - started < 2
