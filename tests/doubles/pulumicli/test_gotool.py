"""Which go builds the Pulumi CLI (doubles/pulumicli/gotool.py): one at or above go.mod's line as is, one of
1.21 or
later with GOTOOLCHAIN, none older; on a bare Debian 12 (golang-go 1.19) apt-get installs golang-go from
bookworm-backports through a temporary sources list. The go and apt commands are small scripts on PATH
that print what the real ones print (`go version`, `apt-cache policy`) and record their arguments."""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from doubles.pulumicli import gotool

ROOT = Path(__file__).resolve().parents[3]

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
    # doubles/pulumicli/go/go.mod: `go 1.26.6` (pkg/v3 v3.274.1's own go.mod asks for it).
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
    """`python -m doubles.pulumicli build --json` with no go anywhere, not root: one JSON object, exit 1."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "AZML_ENGINE_CACHE": str(tmp_path / "cache"),
        "PYTHONPATH": str(ROOT),
    }
    code = (
        "import sys, doubles.pulumicli.gotool as g; g.candidates = lambda: []; g._as_root = lambda: None;"
        "from doubles.pulumicli import build; sys.exit(build.main(['--json']))"
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


# --- Which go commands are found (candidates): PATH's, then /usr/local/go's (the go.dev tarball), then
# Debian's /usr/lib/go-1.N newest first; a symlink to one already found (Debian's /usr/bin/go ->
# ../lib/go-1.N/bin/go) is not listed twice. The machine's files are a table: path -> the file it resolves to.


def _candidates_on(files: dict[str, str], on_path: str | None) -> list[str]:
    def listing(pattern: str) -> list[str]:  # in directory order, as glob returns them
        return [p for p in files if fnmatch.fnmatchcase(p, pattern)]

    with pytest.MonkeyPatch.context() as m:
        m.setattr(gotool.shutil, "which", lambda cmd: on_path if cmd == "go" else None)
        m.setattr(gotool, "glob", SimpleNamespace(glob=listing))
        m.setattr(gotool.os, "access", lambda path, mode: path in files)
        m.setattr(gotool.os.path, "realpath", lambda path: files.get(path, path))
        return gotool.candidates()


def test_debians_go_on_path_then_its_other_releases_newest_first() -> None:
    # Debian 12 with golang-go (1.19, /usr/bin/go) and two releases from bookworm-backports beside it.
    files = {
        "/usr/lib/go-1.23/bin/go": "/usr/lib/go-1.23/bin/go",
        "/usr/lib/go-1.21/bin/go": "/usr/lib/go-1.21/bin/go",
        "/usr/lib/go-1.19/bin/go": "/usr/lib/go-1.19/bin/go",
        "/usr/bin/go": "/usr/lib/go-1.19/bin/go",
    }
    assert _candidates_on(files, "/usr/bin/go") == [
        "/usr/bin/go",
        "/usr/lib/go-1.23/bin/go",
        "/usr/lib/go-1.21/bin/go",
    ]


@pytest.mark.parametrize("on_path", ["/usr/local/go/bin/go", None])
def test_the_go_dev_tarball_is_listed_once(on_path: str | None) -> None:
    files = {
        "/usr/local/go/bin/go": "/usr/local/go/bin/go",
        "/usr/lib/go-1.19/bin/go": "/usr/lib/go-1.19/bin/go",
    }
    assert _candidates_on(files, on_path) == ["/usr/local/go/bin/go", "/usr/lib/go-1.19/bin/go"]


def test_a_go_found_first_is_used_and_nothing_installed(tmp_path: Path, only_path) -> None:
    machine = Machine(tmp_path, distro_go="1.19")
    _script(machine.bin / "go", 'echo "go version go1.26.8 linux/amd64"\n')
    only_path(machine)
    said: list[str] = []
    go = gotool.find(say=said.append)
    assert go == gotool.Go(str(machine.bin / "go"), (1, 26, 8), {})
    assert said == [] and machine.calls() == ""


# --- As root apt-get runs as it is; otherwise through `sudo -n` when sudo needs no password (`sudo -n true`
# exits 0; with a password needed it prints "sudo: a password is required" and exits 1); else nothing runs.


def _sudo(machine: Machine, *, password: bool) -> Path:
    """A `sudo` on the machine's PATH that records its arguments and runs the command (-n: never prompt)."""
    log = machine.tmp / "sudo.log"
    test = 'echo "sudo: a password is required" >&2; exit 1' if password else "exit 0"
    _script(
        machine.bin / "sudo",
        f'echo "$*" >> {log}\n[ "$1" = -n ] || exit 1\nshift\n[ "$1" = true ] && {{ {test}; }}\nexec "$@"\n',
    )
    return log


@pytest.fixture
def real_root(monkeypatch: pytest.MonkeyPatch, only_path):
    """only_path's machine, but root or not by the effective uid and a PATH with no other sudo."""

    def use(machine: Machine, *, euid: int) -> None:
        only_path(machine)
        monkeypatch.setattr(gotool, "_as_root", _AS_ROOT)
        tools = machine.tmp / "tools"  # what the apt-get script runs, without /usr/bin's own sudo
        tools.mkdir()
        for name in ("cat", "sed", "chmod"):
            (tools / name).symlink_to(shutil.which(name))
        monkeypatch.setenv("PATH", f"{machine.bin}:{tools}")
        monkeypatch.setattr(gotool.os, "geteuid", lambda: euid)

    return use


_AS_ROOT = gotool._as_root


def test_root_runs_apt_get_itself(tmp_path: Path, real_root) -> None:
    machine = Machine(tmp_path, distro_go="1.22")
    log = _sudo(machine, password=False)
    real_root(machine, euid=0)
    said: list[str] = []
    assert gotool.find(say=said.append).version == (1, 22, 0)
    assert "engine: apt-get update -q" in said and "engine: apt-get install -y -q golang-go" in said
    assert not log.exists()


def test_passwordless_sudo_runs_apt_get(tmp_path: Path, real_root) -> None:
    machine = Machine(tmp_path, distro_go="1.22")
    log = _sudo(machine, password=False)
    real_root(machine, euid=1000)
    said: list[str] = []
    assert gotool.find(say=said.append).version == (1, 22, 0)
    assert (
        "engine: sudo -n apt-get update -q" in said
        and "engine: sudo -n apt-get install -y -q golang-go" in said
    )
    assert log.read_text() == "-n true\n-n apt-get update -q\n-n apt-get install -y -q golang-go\n"


@pytest.mark.parametrize("sudo", ["needs a password", "absent"])
def test_without_root_or_passwordless_sudo_nothing_is_installed(tmp_path: Path, real_root, sudo: str) -> None:
    machine = Machine(tmp_path, distro_go="1.22")
    log = _sudo(machine, password=True) if sudo == "needs a password" else None
    real_root(machine, euid=1000)
    said: list[str] = []
    with pytest.raises(gotool.GoMissing, match="go commands found: none"):
        gotool.find(say=said.append)
    assert said == [] and machine.calls() == ""
    assert log is None or log.read_text() == "-n true\n"


# --- apt-get's own words when it fails: the last five lines of its output, indented, after the command.

APT_UPDATE_OK = "Hit:1 http://mirror.example/debian bookworm InRelease\nReading package lists...\n"
# stdout, then stderr, of `apt-get update` with a suite the mirror does not have (exit status 100)
BACKPORTS_404_OUT = (
    "Hit:1 http://mirror.example/debian bookworm InRelease\n"
    "Ign:2 http://mirror.example/debian bookworm-backports InRelease\n"
    "Err:3 http://mirror.example/debian bookworm-backports Release\n"
    "  404  Not Found [IP: 192.0.2.1 80]\n"
    "Reading package lists...\n"
)
BACKPORTS_404_ERR = (
    "E: The repository 'http://mirror.example/debian bookworm-backports Release' does not have a Release"
    " file.\n"
    "N: Updating from such a repository can't be done securely, and is therefore disabled by default.\n"
    "N: See apt-secure(8) manpage for repository creation and user configuration details.\n"
)


def test_a_failed_backports_update_shows_apt_gets_last_lines(tmp_path: Path, only_path) -> None:
    machine = Machine(tmp_path, distro_go="1.19")
    (tmp_path / "ok.txt").write_text(APT_UPDATE_OK)
    (tmp_path / "out.txt").write_text(BACKPORTS_404_OUT)
    (tmp_path / "err.txt").write_text(BACKPORTS_404_ERR)
    _script(
        machine.bin / "apt-get",
        f'echo "$*" >> {machine.log}\n'
        f'case "$*" in\n'
        f"  *sourcelist*update*) cat {tmp_path}/out.txt; cat {tmp_path}/err.txt >&2; exit 100 ;;\n"
        f"  update*) cat {tmp_path}/ok.txt; exit 0 ;;\n"
        f"esac\nexit 100\n",
    )
    only_path(machine)
    said: list[str] = []
    with pytest.raises(gotool.GoMissing):
        gotool.find(say=said.append)
    assert said[1] == "engine: apt-get update -q"  # its success says nothing more
    assert said[2].startswith("engine: apt-get -o Dir::Etc::sourcelist=") and said[2].endswith(" update -q")
    assert said[3:] == [
        "    404  Not Found [IP: 192.0.2.1 80]\n"
        "  Reading package lists...\n"
        "  E: The repository 'http://mirror.example/debian bookworm-backports Release' does not have a"
        " Release file.\n"
        "  N: Updating from such a repository can't be done securely, and is therefore disabled by default.\n"
        "  N: See apt-secure(8) manpage for repository creation and user configuration details."
    ]
    assert "install" not in machine.calls()


def test_the_release_is_read_from_etc_os_release(monkeypatch: pytest.MonkeyPatch) -> None:
    # os-release(5): shell variable assignments; what `. /etc/os-release` sets is what is read.
    if not Path("/etc/os-release").is_file():
        pytest.skip("no /etc/os-release on this machine")
    monkeypatch.delenv("AZML_OS_RELEASE", raising=False)
    shell = 'echo "$ID"; echo "$VERSION_CODENAME"'
    done = subprocess.run(
        ["sh", "-c", f". /etc/os-release; {shell}"], capture_output=True, text=True, check=True
    )
    release_id, codename = done.stdout.split("\n")[:2]
    release = gotool._os_release()
    assert (release.get("ID", ""), release.get("VERSION_CODENAME", "")) == (release_id, codename)
    assert release_id


# --- The system's apt sources, as apt reads them (sources.list(5)): /etc/apt/sources.list, then the files
# of /etc/apt/sources.list.d named *.list (one-line) or *.sources (deb822), in name order; other names are
# ignored (the defaults of Dir::Ignore-Files-Silently in apt's apt-pkg/init.cc: *.save, *.disabled, ...).


def _mirror_on(tmp_path: Path, files: dict[str, str], codename: str = "bookworm") -> str | None:
    etc = tmp_path / "etc-apt"
    for name, text in files.items():
        (etc / name).parent.mkdir(parents=True, exist_ok=True)
        (etc / name).write_text(text)
    (etc / "sources.list.d").mkdir(parents=True, exist_ok=True)

    def moved(path: str) -> str:
        return str(path).replace("/etc/apt", str(etc), 1)

    found = SimpleNamespace(
        glob=lambda pattern: [p.replace(str(etc), "/etc/apt", 1) for p in glob.glob(moved(pattern))]
    )
    with pytest.MonkeyPatch.context() as m:
        m.setattr(gotool, "glob", found)
        m.setattr(gotool, "Path", lambda path: Path(moved(path)))
        return gotool.debian_mirror(codename)


def test_a_stock_debian_12_image_has_only_debian_sources(tmp_path: Path) -> None:
    # No /etc/apt/sources.list at all: the mirror is the deb822 file's.
    assert _mirror_on(tmp_path, {"sources.list.d/debian.sources": DEB822}) == "http://mirror.example/debian"


def test_sources_list_comes_before_sources_list_d(tmp_path: Path) -> None:
    files = {
        "sources.list": ONE_LINE.replace("mirror.example", "first.example"),
        "sources.list.d/debian.sources": DEB822,
    }
    assert _mirror_on(tmp_path, files) == "http://first.example/debian"


def test_a_file_apt_ignores_names_no_mirror(tmp_path: Path) -> None:
    files = {
        "sources.list.d/archive.list.save": "deb http://old.example/debian bookworm main\n",
        "sources.list.d/bookworm.list.disabled": "deb http://disabled.example/debian bookworm main\n",
        "sources.list.d/debian.sources": DEB822,
    }
    assert _mirror_on(tmp_path, files) == "http://mirror.example/debian"


@pytest.mark.parametrize(
    "line",
    [
        "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example/debian"
        " bookworm main",
        "deb [ arch=amd64 ] http://mirror.example/debian bookworm main contrib",
        "  deb http://mirror.example/debian bookworm main",
    ],
)
def test_one_line_sources_with_options(line: str) -> None:
    # sources.list(5): `deb [ option1=value1 option2=value2 ] uri suite [component1] [component2] [...]`
    assert gotool.mirror_in([line + "\n"], "bookworm") == "http://mirror.example/debian"


def test_a_bracketed_address_in_the_uri_is_kept() -> None:
    assert (
        gotool.mirror_in(["deb http://[2001:db8::1]/debian bookworm main\n"], "bookworm")
        == "http://[2001:db8::1]/debian"
    )


def test_a_one_line_source_needs_a_component() -> None:
    # sources.list(5): a suite that is not an exact path (ending in /) needs at least one component; apt-get
    # refuses such a line ("Malformed entry"), so it names no mirror.
    text = "deb http://broken.example/debian bookworm\ndeb http://mirror.example/debian bookworm main\n"
    assert gotool.mirror_in([text], "bookworm") == "http://mirror.example/debian"


def test_a_disabled_deb822_stanza_names_no_mirror() -> None:
    # sources.list(5), deb822: `Enabled: no` disables the stanza.
    disabled = (
        "Types: deb\nURIs: http://disabled.example/debian\nSuites: bookworm\n"
        "Components: main\nEnabled: no\n\n"
    )
    assert gotool.mirror_in([disabled + DEB822], "bookworm") == "http://mirror.example/debian"
    assert gotool.mirror_in([disabled], "bookworm") is None
