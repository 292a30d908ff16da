"""Which go builds the Pulumi CLI (engine/gotool.py): one at or above go.mod's line as is, one of 1.21 or
later with GOTOOLCHAIN, none older; on a bare Debian 12 (golang-go 1.19) apt-get installs golang-go from
bookworm-backports through a temporary sources list. The go and apt commands are small scripts on PATH
that print what the real ones print (`go version`, `apt-cache policy`) and record their arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import gotool

ROOT = Path(__file__).resolve().parent.parent.parent

# The apt sources of a stock Debian 12 image, deb822 format (debian.sources), and the one-line format.
DEB822 = """Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example/debian-security
Suites: bookworm-security
Components: main
"""
ONE_LINE = (
    "# deb-src http://src.example/debian bookworm main\ndeb http://mirror.example/debian bookworm main\n"
)


def test_the_module_line_is_the_minimum() -> None:
    # engine/go/go.mod: `go 1.26.6` (pkg/v3 v3.274.1's own go.mod asks for it).
    assert gotool.required() == (1, 26, 6)


@pytest.mark.parametrize(
    "text, version",
    [
        ("go version go1.26.8 linux/amd64\n", (1, 26, 8)),
        ("go version go1.19.8 linux/amd64\n", (1, 19, 8)),
        ("go version go1.26rc1 linux/amd64\n", (1, 26, 0)),
        ("go version go1.21 linux/amd64\n", (1, 21, 0)),
        ("go version devel +abc linux/amd64\n", None),
    ],
)
def test_go_version_lines(text: str, version: tuple[int, int, int] | None) -> None:
    assert gotool.parse_version(text) == version


@pytest.mark.parametrize(
    "policy, version",
    [
        ("golang-go:\n  Installed: (none)\n  Candidate: 2:1.19~1\n", (1, 19, 0)),
        ("golang-go:\n  Installed: (none)\n  Candidate: 2:1.23~2~bpo12+1\n", (1, 23, 0)),
        ("golang-go:\n  Installed: (none)\n  Candidate: (none)\n", None),
        ("", None),
    ],
)
def test_apt_candidate_versions(policy: str, version: tuple[int, int, int] | None) -> None:
    assert gotool.candidate_version(policy) == version


NEED = (1, 26, 6)


@pytest.mark.parametrize(
    "found, path, toolchain",
    [
        ({"/a/go": (1, 26, 6)}, "/a/go", None),  # exactly the module's release
        ({"/a/go": (1, 27, 0)}, "/a/go", None),
        ({"/a/go": (1, 26, 5)}, "/a/go", gotool.TOOLCHAIN),  # one patch below: fetch the toolchain
        ({"/a/go": (1, 21, 0)}, "/a/go", gotool.TOOLCHAIN),  # the first release that can switch
        ({"/a/go": (1, 20, 14)}, None, None),  # cannot switch
        ({"/a/go": (1, 23, 4), "/b/go": (1, 26, 8)}, "/b/go", None),  # a new enough one wins over switching
        ({"/a/go": (1, 19, 8), "/b/go": (1, 22, 0)}, "/b/go", gotool.TOOLCHAIN),
        ({}, None, None),
    ],
)
def test_choice_of_go(found: dict, path: str | None, toolchain: str | None) -> None:
    go = gotool.choose(found, NEED)
    if path is None:
        assert go is None
        return
    assert go is not None and go.path == path
    assert go.env.get("GOTOOLCHAIN") == toolchain


def test_the_toolchain_asked_for_builds_the_module() -> None:
    assert gotool.parse_version(gotool.TOOLCHAIN) >= gotool.required()


@pytest.mark.parametrize("texts", [[DEB822], [ONE_LINE], ["", DEB822]])
def test_the_systems_own_mirror_is_used_for_backports(texts: list[str]) -> None:
    assert gotool.mirror_in(texts, "bookworm") == "http://mirror.example/debian"


def test_no_mirror_for_another_release() -> None:
    assert gotool.mirror_in([DEB822, ONE_LINE], "trixie") is None


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


class Machine:
    """A PATH with `apt-get` and `apt-cache` scripts; `install` of golang-go puts a `go` of the given release
    on PATH (the distribution's, or backports' when `-t <suite>-backports` is given)."""

    def __init__(self, tmp: Path, *, distro_go: str, backports_go: str = "1.23.4") -> None:
        self.tmp = tmp
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.log = tmp / "apt.log"
        go_line = 'echo "go version go$V linux/amd64"'
        go = self.bin / "go"
        _script(
            self.bin / "apt-get",
            f'echo "$*" >> {self.log}\n'
            'for a in "$@"; do case "$a" in Dir::Etc::sourcelist=*) cat "${a#*=}" >> '
            + f"{self.log};; esac; done\n"
            f'case "$*" in\n'
            f"  *update*) exit 0 ;;\n"
            f"  *-t\\ *-backports*golang-go*) V={backports_go} ;;\n"
            f"  *install*golang-go*) V={distro_go} ;;\n"
            f"  *) exit 100 ;;\n"
            f"esac\n"
            f"printf '#!/bin/sh\\n{go_line}\\n' | sed \"s/\\$V/$V/\" > {go}; chmod +x {go}\n",
        )
        _script(
            self.bin / "apt-cache", f'echo "golang-go:\n  Installed: (none)\n  Candidate: 2:{distro_go}~1"\n'
        )

    def calls(self) -> str:
        return self.log.read_text() if self.log.exists() else ""


@pytest.fixture
def only_path(monkeypatch: pytest.MonkeyPatch):
    """Candidates are the `go` on PATH only (this machine's own /usr/local/go is hidden)."""

    def use(machine: Machine, *, root: bool = True) -> None:
        monkeypatch.setenv("PATH", f"{machine.bin}:/usr/bin:/bin")
        monkeypatch.setattr(
            gotool, "candidates", lambda: [p for p in [str(machine.bin / "go")] if os.path.exists(p)]
        )
        monkeypatch.setattr(gotool, "_as_root", lambda: [] if root else None)
        release = machine.tmp / "os-release"
        release.write_text('PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_CODENAME=bookworm\n')
        monkeypatch.setenv("AZML_OS_RELEASE", str(release))
        monkeypatch.setattr(gotool, "debian_mirror", lambda codename: gotool.mirror_in([DEB822], codename))

    return use


def test_debian_12_gets_golang_from_backports_then_the_toolchain(tmp_path: Path, only_path) -> None:
    machine = Machine(tmp_path, distro_go="1.19")
    only_path(machine)
    said: list[str] = []
    go = gotool.find(say=said.append)
    assert go.version == (1, 23, 4)
    assert go.env == {"GOTOOLCHAIN": gotool.TOOLCHAIN}
    calls = machine.calls()
    # The distribution's 1.19 is not installed (it could not build or switch); backports' is, from the
    # system's own mirror, through a sources list of its own.
    assert "install -y -q golang-go\n" not in calls
    assert "-t bookworm-backports golang-go" in calls
    assert "deb http://mirror.example/debian bookworm-backports main" in calls
    assert any("installing Debian's golang-go" in line for line in said)


def test_a_distribution_go_that_can_switch_is_installed_as_is(tmp_path: Path, only_path) -> None:
    machine = Machine(tmp_path, distro_go="1.22")
    only_path(machine)
    go = gotool.find(say=lambda line: None)
    assert go.version == (1, 22, 0) and go.env == {"GOTOOLCHAIN": gotool.TOOLCHAIN}
    assert "backports" not in machine.calls()


def test_not_root_names_the_commands_and_installs_nothing(tmp_path: Path, only_path) -> None:
    machine = Machine(tmp_path, distro_go="1.19")
    only_path(machine, root=False)
    with pytest.raises(gotool.GoMissing) as e:
        gotool.find(say=lambda line: None)
    message = str(e.value)
    assert "needs Go 1.26.6 or later, or Go 1.21 or later to fetch it" in message
    assert "go commands found: none" in message
    assert "apt-get install -t bookworm-backports golang-go" in message
    assert machine.calls() == ""


def test_an_old_go_is_named_in_the_message(tmp_path: Path, only_path) -> None:
    machine = Machine(tmp_path, distro_go="1.19")
    _script(machine.bin / "go", 'echo "go version go1.19.8 linux/amd64"\n')
    only_path(machine, root=False)
    with pytest.raises(gotool.GoMissing, match=r"go commands found: .*/bin/go \(go1\.19\.8\)"):
        gotool.find(say=lambda line: None)


def test_make_engine_says_what_to_install_without_a_traceback(tmp_path: Path) -> None:
    """`python -m engine build --json` with no go anywhere, not root: one JSON object, exit 1."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "AZML_ENGINE_CACHE": str(tmp_path / "cache"),
        "PYTHONPATH": str(ROOT),
    }
    code = (
        "import sys, engine.gotool as g; g.candidates = lambda: []; g._as_root = lambda: None;"
        "from engine import build; sys.exit(build.main(['--json']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False and "needs Go 1.26.6 or later" in report["error"]


@pytest.mark.parametrize(
    "go, text",
    [
        (gotool.Go("/usr/local/go/bin/go", (1, 26, 8), {}), "/usr/local/go/bin/go (go1.26.8)"),
        (
            gotool.Go("/usr/bin/go", (1, 23, 5), {"GOTOOLCHAIN": "go1.26.8"}),
            "/usr/bin/go (go1.23.5) with GOTOOLCHAIN=go1.26.8",
        ),
    ],
)
def test_the_go_recorded_in_build_json(go: gotool.Go, text: str) -> None:
    assert go.describe() == text


@pytest.mark.parametrize("distro, backports", [("1.21", False), ("1.20", True)])
def test_a_distribution_go_is_taken_from_1_21_and_backports_below(
    tmp_path: Path, only_path, distro: str, backports: bool
) -> None:
    machine = Machine(tmp_path, distro_go=distro)
    only_path(machine)
    go = gotool.find(say=lambda line: None)
    assert ("-t bookworm-backports golang-go" in machine.calls()) is backports
    assert go.version == ((1, 23, 4) if backports else (1, 21, 0))


def test_a_one_line_source_needs_its_suite() -> None:
    # `deb URI` with no suite is no source of bookworm; the next line is.
    text = "deb http://broken.example/debian\ndeb http://mirror.example/debian bookworm main\n"
    assert gotool.mirror_in([text], "bookworm") == "http://mirror.example/debian"
