"""`make test` on a bare Debian machine: `make fuse-check` installs fuse3 with apt-get as root (or through
passwordless sudo) and names the one command to run otherwise; `make smoke` (no rw_mount output) needs none.

Run for real against a PATH that holds only the tools the recipe calls: `fusermount3` is hidden, and
`apt-get`, `id` and `sudo` are small scripts that record their arguments (no system package is touched)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


class Machine:
    """A PATH with fake `id`, `apt-get` and (optionally) `sudo`; apt-get's calls land in `calls`."""

    def __init__(self, tmp: Path, *, uid: int = 0, sudo: bool = False, apt: str = "ok") -> None:
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.log = tmp / "apt.log"
        self.dev = tmp / "fuse"
        self.dev.write_text("")
        _script(self.bin / "id", f'[ "$1" = -u ] && echo {uid}\n')
        if sudo:
            # sudo -n true succeeds; sudo -n CMD... runs CMD and records that it came through sudo.
            _script(
                self.bin / "sudo",
                f'[ "$1" = -n ] && shift\n[ "$1" = true ] && exit 0\necho sudo >> {self.log}\nexec "$@"\n',
            )
        # apt: "ok" installs at once; "stale" needs `update` first (no package lists); "fail" never installs.
        install = f"/bin/cp {self.bin / 'id'} {self.bin / 'fusermount3'}; exit 0"
        _script(
            self.bin / "apt-get",
            f'echo "$*" >> {self.log}\n'
            f'case "$*" in\n'
            f"  update*) : > {tmp / 'updated'}; exit 0 ;;\n"
            f"  *install*fuse3*)\n"
            f"    [ {apt} = fail ] && exit 100\n"
            f"    [ {apt} = stale ] && [ ! -e {tmp / 'updated'} ] && exit 100\n"
            f"    {install} ;;\n"
            f"esac\nexit 1\n",
        )

    def make(self, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [MAKE, "--no-print-directory", "-C", str(ROOT), "fuse-check", f"FUSE_DEV={self.dev}", *extra],
            env={"PATH": str(self.bin), "HOME": str(self.bin.parent)},
            capture_output=True,
            text=True,
            timeout=60,
        )

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


def test_root_installs_fuse3_with_apt_get(tmp_path: Path) -> None:
    m = Machine(tmp_path, uid=0)
    proc = m.make()
    assert proc.returncode == 0, proc.stderr
    assert m.calls() == ["install -y -q fuse3"]
    assert "make: installing Debian's fuse3 (fusermount3, libfuse3.so.3)" in proc.stderr
    assert (m.bin / "fusermount3").exists()


def test_root_on_a_fresh_image_updates_the_package_lists_first(tmp_path: Path) -> None:
    m = Machine(tmp_path, uid=0, apt="stale")
    proc = m.make()
    assert proc.returncode == 0, proc.stderr
    assert m.calls() == ["install -y -q fuse3", "update -q", "install -y -q fuse3"]


def test_non_root_without_sudo_names_the_command_to_run(tmp_path: Path) -> None:
    m = Machine(tmp_path, uid=1000)
    proc = m.make()
    assert proc.returncode == 2
    assert m.calls() == []
    assert (
        "make: fusermount3 not found and not root: run `sudo apt-get install -y fuse3` (Debian/Ubuntu), "
        "then make again" in proc.stderr
    )


def test_non_root_with_passwordless_sudo_installs_through_sudo(tmp_path: Path) -> None:
    m = Machine(tmp_path, uid=1000, sudo=True)
    proc = m.make()
    assert proc.returncode == 0, proc.stderr
    assert m.calls() == ["sudo", "install -y -q fuse3"]
    assert "sudo -n apt-get install -y fuse3" in proc.stderr


def test_a_failing_apt_get_stops_make_with_the_fix(tmp_path: Path) -> None:
    m = Machine(tmp_path, uid=0, apt="fail")
    proc = m.make()
    assert proc.returncode == 2
    assert m.calls() == ["install -y -q fuse3", "update -q", "install -y -q fuse3"]
    assert "`apt-get install -y fuse3` failed" in proc.stderr


def test_fuse3_present_installs_nothing(tmp_path: Path) -> None:
    m = Machine(tmp_path, uid=0)
    shutil.copy(m.bin / "id", m.bin / "fusermount3")
    proc = m.make()
    assert proc.returncode == 0, proc.stderr
    assert m.calls() == [] and proc.stderr == ""


def test_an_unusable_dev_fuse_is_named(tmp_path: Path) -> None:
    m = Machine(tmp_path, uid=0)
    shutil.copy(m.bin / "id", m.bin / "fusermount3")
    m.dev.unlink()
    proc = m.make()
    assert proc.returncode == 2
    assert f"make: {m.dev} is missing or not usable by this user" in proc.stderr
    assert "--device /dev/fuse --cap-add SYS_ADMIN" in proc.stderr


def test_test_runs_the_fuse_check_smoke_needs_none_and_ci_installs_nothing_itself() -> None:
    makefile = (ROOT / "Makefile").read_text()
    prerequisites = {
        line.split(":", 1)[0]: line.split(":", 1)[1].split()
        for line in makefile.splitlines()
        if line.startswith(("test:", "smoke:"))
    }
    assert {"setup", "fuse-check", "hostname-check"} <= set(prerequisites["test"])
    assert "setup" in prerequisites["smoke"] and "fuse-check" not in prerequisites["smoke"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "apt-get" not in ci and "pip install" not in ci and "npm" not in ci
    assert ci.rstrip().endswith("make lint\nmake test")


class VenvMachine(Machine):
    """Debian's python3 without python3-venv: `python3 -m venv DIR` makes DIR/bin/python, then fails (no
    ensurepip: "The virtual environment was not created successfully because ensurepip is not available")
    until apt-get installs python3-venv. The venv's python is a stub that accepts the pip calls."""

    def __init__(self, tmp: Path, *, uid: int = 0, sudo: bool = False, has_venv: bool = False) -> None:
        super().__init__(tmp, uid=uid, sudo=sudo)
        marker = tmp / "python3-venv"
        if has_venv:
            marker.write_text("")
        _script(
            self.bin / "apt-get",
            f'echo "$*" >> {self.log}\n'
            f'case "$*" in *install*python3-venv*) : > {marker}; exit 0 ;; esac\nexit 1\n',
        )
        _script(
            self.bin / "python3",
            '[ "$1 $2" = "-m venv" ] || exit 0\n'
            '/bin/mkdir -p "$3/bin" && printf "#!/bin/sh\\nexit 0\\n" > "$3/bin/python"\n'
            '/bin/chmod +x "$3/bin/python"\n'
            f"[ -e {marker} ] && exit 0\n"
            'echo "The virtual environment was not created successfully because ensurepip is not"\n'
            "exit 1\n",
        )
        _script(self.bin / "rm", 'exec /bin/rm "$@"\n')
        self.venv = tmp / "pack-venv"

    def make_venv(self) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                MAKE,
                "--no-print-directory",
                "-C",
                str(ROOT),
                f"PACK_VENV={self.venv}",
                f"{self.venv}/bin/python",
            ],
            env={"PATH": str(self.bin), "HOME": str(self.bin.parent)},
            capture_output=True,
            text=True,
            timeout=60,
        )


def test_root_installs_python3_venv_when_venv_fails(tmp_path: Path) -> None:
    m = VenvMachine(tmp_path, uid=0)
    proc = m.make_venv()
    assert proc.returncode == 0, proc.stderr
    assert m.calls() == ["install -y -q python3-venv"]
    assert (
        "make: python3 -m venv needs Debian's python3-venv (ensurepip): apt-get install -y python3-venv"
        in (proc.stderr)
    )
    assert (m.venv / "bin" / "python").exists()


def test_non_root_is_told_to_install_python3_venv_and_no_half_made_venv_is_left(tmp_path: Path) -> None:
    m = VenvMachine(tmp_path, uid=1000)
    proc = m.make_venv()
    assert proc.returncode == 2
    assert m.calls() == []
    assert "run `sudo apt-get install -y python3-venv`, then make again" in proc.stderr
    # A half-made folder would pass the next run's `test -x` and fail later on a pip-less venv.
    assert not m.venv.exists()


def test_a_working_venv_installs_nothing(tmp_path: Path) -> None:
    m = VenvMachine(tmp_path, uid=1000, has_venv=True)
    proc = m.make_venv()
    assert proc.returncode == 0, proc.stderr
    assert m.calls() == []


# A name under .invalid never resolves (RFC 2606).
@pytest.mark.parametrize(("name", "ok"), [("localhost", True), ("no-such-host.invalid", False)])
def test_a_machine_name_that_does_not_resolve_is_named_before_the_suite_hangs(name: str, ok: bool) -> None:
    proc = subprocess.run(
        [MAKE, "--no-print-directory", "-C", str(ROOT), "hostname-check", f"HOST_NAME={name}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == (0 if ok else 2)
    if not ok:
        assert f"make: this machine's name '{name}' does not resolve" in proc.stderr
        assert f"add `127.0.1.1 {name}` to /etc/hosts" in proc.stderr
