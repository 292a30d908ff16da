"""The go command that builds doubles/pulumicli/go, found or installed on a bare Debian machine (`make
engine`).

doubles/pulumicli/go/go.mod's `go` line is the minimum release. In order:

1. A go at or above it (on PATH, `/usr/local/go/bin`, Debian's `/usr/lib/go-1.N/bin`): used as is.
2. A go of 1.21 or later below it: used with `GOTOOLCHAIN=<TOOLCHAIN>`. The go command itself then fetches
   that release from the Go module proxy as the module `golang.org/toolchain` and checks it against the
   checksum database before running it (go.dev/doc/toolchain, "Downloading toolchains";
   cmd/go/internal/toolchain/select.go `Select` and `Exec`). Toolchain switching arrived in Go 1.21, so an
   older go cannot do this.
3. None usable (Debian 12's golang-go is 1.19): as root, or through passwordless sudo, apt-get installs
   golang-go: the distribution's when it is 1.21 or later (Debian 13: 1.24; Ubuntu 24.04: 1.22), otherwise
   from `<codename>-backports` (bookworm-backports: 1.23) through a temporary sources list on the system's
   own Debian mirror, so the machine's apt configuration is left as it was; then step 2.
Otherwise `GoMissing` names the commands to run.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

GO_MOD = Path(__file__).resolve().parent / "go" / "go.mod"
# The release step 2 asks for: the newest 1.26 patch release when written (go.dev/doc/devel/release).
TOOLCHAIN = "go1.26.8"
SWITCHING = (1, 21)  # the first release with GOTOOLCHAIN (go.dev/doc/toolchain)


class GoMissing(RuntimeError):
    """No usable go command and none could be installed: the message names what to run."""


@dataclass(frozen=True)
class Go:
    path: str
    version: tuple[int, int, int]
    env: dict[str, str]  # added to the build's environment (GOTOOLCHAIN for step 2)

    def describe(self) -> str:
        own = ".".join(map(str, self.version))
        if "GOTOOLCHAIN" in self.env:
            return f"{self.path} (go{own}) with GOTOOLCHAIN={self.env['GOTOOLCHAIN']}"
        return f"{self.path} (go{own})"


def required() -> tuple[int, int, int]:
    """The go.mod's `go` line, e.g. `go 1.26.6` -> (1, 26, 6)."""
    m = re.search(r"^go (\d+)\.(\d+)(?:\.(\d+))?\s*$", GO_MOD.read_text(), re.MULTILINE)
    if m is None:
        raise GoMissing(f"{GO_MOD} has no `go` line")
    return int(m[1]), int(m[2]), int(m[3] or 0)


def parse_version(text: str) -> tuple[int, int, int] | None:
    """`go version go1.23.4 linux/amd64` -> (1, 23, 4); `go1.26rc1` -> (1, 26, 0); None if unreadable."""
    m = re.search(r"\bgo(\d+)\.(\d+)(?:\.(\d+))?", text)
    return (int(m[1]), int(m[2]), int(m[3] or 0)) if m else None


def _version(go: str) -> tuple[int, int, int] | None:
    # GOTOOLCHAIN=local: the go command's own release, not one a go.mod nearby would switch to.
    env = {**os.environ, "GOTOOLCHAIN": "local"}
    try:
        out = subprocess.run([go, "version"], capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_version(out.stdout) if out.returncode == 0 else None


def candidates() -> list[str]:
    """Every go command on this machine, PATH's first, each real file once."""
    found = [shutil.which("go"), "/usr/local/go/bin/go"]
    debian = glob.glob("/usr/lib/go-1.*/bin/go")
    found += sorted(debian, key=lambda p: parse_version(p.replace("/usr/lib/go-", "go")) or (0, 0, 0))[::-1]
    seen: set[str] = set()
    out = []
    for path in found:
        if path and os.access(path, os.X_OK) and (real := os.path.realpath(path)) not in seen:
            seen.add(real)
            out.append(path)
    return out


def choose(versions: dict[str, tuple[int, int, int]], need: tuple[int, int, int]) -> Go | None:
    """Step 1, else step 2, among the go commands found (in the order found)."""
    for path, version in versions.items():
        if version >= need:
            return Go(path, version, {})
    for path, version in versions.items():
        if version[:2] >= SWITCHING:
            return Go(path, version, {"GOTOOLCHAIN": TOOLCHAIN})
    return None


def _found() -> dict[str, tuple[int, int, int]]:
    return {path: v for path in candidates() if (v := _version(path)) is not None}


def _as_root() -> list[str] | None:
    """[] as root, ["sudo", "-n"] with passwordless sudo, None otherwise."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], capture_output=True).returncode == 0:
        return ["sudo", "-n"]
    return None


def _os_release() -> dict[str, str]:
    try:
        text = Path(os.environ.get("AZML_OS_RELEASE", "/etc/os-release")).read_text()
    except OSError:
        return {}
    return {k: v.strip('"') for k, _, v in (line.partition("=") for line in text.splitlines()) if k}


def debian_mirror(codename: str) -> str | None:
    """The URI the system's apt sources use for `<codename>` main (one-line or deb822 format), from the files
    apt reads (sources.list(5)): sources.list, then sources.list.d's *.list and *.sources in name order (apt
    ignores other names there, such as *.save or *.disabled)."""
    texts = []
    parts = glob.glob("/etc/apt/sources.list.d/*.list") + glob.glob("/etc/apt/sources.list.d/*.sources")
    for path in ["/etc/apt/sources.list", *sorted(parts)]:
        try:
            texts.append(Path(path).read_text())
        except OSError:
            continue
    return mirror_in(texts, codename)


# sources.list(5), one-line style: `deb [ option1=value1 ... ] uri suite component1 [component2] [...]`; a
# suite that is not an exact path (ending in /) needs at least one component.
ONE_LINE = re.compile(r"\s*deb\s+(?:\[[^\]]*\]\s*)?(\S+)\s+(\S+)\s+\S")


def mirror_in(texts: list[str], codename: str) -> str | None:
    for text in texts:
        for line in text.splitlines():
            m = ONE_LINE.match(line)
            if m and m[2] == codename:
                return m[1]
        for stanza in re.split(r"\n\s*\n", text):
            pairs = (ln.partition(":") for ln in stanza.splitlines())
            fields = {k.strip(): v.strip() for k, sep, v in pairs if sep}
            if (
                "deb" in fields.get("Types", "").split()
                and codename in fields.get("Suites", "").split()
                and fields.get("Enabled") != "no"  # deb822's `Enabled: no` turns the stanza off
            ):
                return fields.get("URIs", "").split()[0] if fields.get("URIs") else None
    return None


def candidate_version(policy: str) -> tuple[int, int, int] | None:
    """`apt-cache policy golang-go`'s `Candidate: 2:1.19~1` -> (1, 19, 0); None for `(none)` or no line."""
    m = re.search(r"Candidate:\s*(?:\d+:)?(\d+)\.(\d+)", policy)
    return (int(m[1]), int(m[2]), 0) if m else None


def _apt(prefix: list[str], args: list[str], say) -> bool:
    cmd = [*prefix, "apt-get", *args]
    say(f"engine: {' '.join(cmd)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        say("\n".join(f"  {line}" for line in (done.stdout + done.stderr).strip().splitlines()[-5:]))
    return done.returncode == 0


def install(prefix: list[str], say) -> None:
    """Step 3: golang-go from the distribution, else from its backports suite (temporary sources list)."""
    if not shutil.which("apt-get"):
        return
    _apt(prefix, ["update", "-q"], say)
    policy = subprocess.run(["apt-cache", "policy", "golang-go"], capture_output=True, text=True).stdout
    own = candidate_version(policy)
    if own is not None and own[:2] >= SWITCHING:
        _apt(prefix, ["install", "-y", "-q", "golang-go"], say)
        return
    codename = _os_release().get("VERSION_CODENAME", "")
    mirror = debian_mirror(codename) if codename else None
    if not mirror:
        return
    with tempfile.TemporaryDirectory(prefix="azml-apt-") as tmp:
        listing = Path(tmp) / "backports.list"
        listing.write_text(f"deb {mirror} {codename}-backports main\n")
        (Path(tmp) / "lists" / "partial").mkdir(parents=True)
        os.chmod(tmp, 0o755)
        opts = ["-o", f"Dir::Etc::sourcelist={listing}", "-o", f"Dir::State::Lists={tmp}/lists"]
        if _apt(prefix, [*opts, "update", "-q"], say):
            _apt(prefix, [*opts, "install", "-y", "-q", "-t", f"{codename}-backports", "golang-go"], say)


def find(say=lambda line: print(line, file=sys.stderr, flush=True)) -> Go:
    need = required()
    if (go := choose(_found(), need)) is not None:
        return go
    prefix = _as_root()
    if prefix is not None:
        say("engine: no go command of 1.21 or later (to build the Pulumi CLI): installing Debian's golang-go")
        install(prefix, say)
        if (go := choose(_found(), need)) is not None:
            return go
    found = ", ".join(f"{p} (go{'.'.join(map(str, v))})" for p, v in _found().items()) or "none"
    want = ".".join(map(str, need))
    raise GoMissing(
        f"building the Pulumi CLI needs Go {want} or later, or Go 1.21 or later to fetch it (GOTOOLCHAIN); "
        f"go commands found: {found}. Install one, then make again: as root `apt-get install golang-go` "
        "where "
        "the distribution's is 1.21 or later, else from backports (Debian 12: `apt-get install -t "
        "bookworm-backports golang-go` with bookworm-backports in the apt sources), or Go from go.dev/dl; "
        "see README, 'The real Pulumi engine, offline'"
    )
