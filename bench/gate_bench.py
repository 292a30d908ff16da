"""Benchmark of the policy gate (`python -m preflight prod --json`): not a test, a measurement with its
method.

Method: every sample is a fresh interpreter started with subprocess, timed wall-clock from start to exit, with
its CPU time (user + system of the command and every process it waited for: the CLI, the provider, the pack,
from getrusage(RUSAGE_CHILDREN)), which a loaded machine inflates far less than the wall time. The cases
alternate (new, replay, new, replay, ...) so that a change in the machine's load falls on both; the 1-minute
load average is recorded before and after.
- prod: the gate as it is: the real Pulumi CLI, both evaluations (first-deploy preview, `pulumi up` of the
  stack as declared, update preview);
- prod-replay: the same command in a worktree of `--replay REF` (default: the last commit with the Python
  replay of the engine, which issue 40 deleted), sharing this checkout's virtualenvs.
Target (issue 40): prod within 2x prod-replay.

`--profile` runs the gate once more and prints where its seconds go: each phase from the gate's own progress
lines (time stamped as they arrive), each evaluation's seconds from its --json, and the start-up of each
process alone (the provider with its warm-up, the pack's imports, `pulumi stack init`, the gate's imports).

Usage: .venv/bin/python bench/gate_bench.py [--repeat 5] [--replay REF] [--profile] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
REPLAY = "750acc1"  # main before the gate ran the real engine (issue 40): the replay's last commit


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def checkout(ref: str):
    """A worktree of `ref` in a temporary folder, with this checkout's virtualenvs and pack wheel linked
    in."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "replay"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), ref], cwd=ROOT, check=True)
        try:
            (tree / ".venv").symlink_to(ROOT / ".venv")
            (tree / "policies" / ".venv").symlink_to(ROOT / "policies" / ".venv")
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


def sample(argv: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of `argv` in `cwd`."""
    cpu = _children_cpu()
    start = time.perf_counter()
    run = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(
            f"benchmark command failed ({run.returncode}) in {cwd}: {' '.join(argv)}\n{run.stderr[-2000:]}"
        )
    return elapsed, _children_cpu() - cpu


def summary(name: str, samples: list[tuple[float, float]]) -> dict[str, Any]:
    return {
        "name": name,
        "median_s": round(statistics.median(s[0] for s in samples), 3),
        "runs_s": [round(s[0], 3) for s in samples],
        "cpu_median_s": round(statistics.median(s[1] for s in samples), 3),
    }


def compare(repeat: int, replay: str) -> list[dict[str, Any]]:
    argv = [sys.executable, "-m", "preflight", "prod", "--json"]
    new: list[tuple[float, float]] = []
    old: list[tuple[float, float]] = []
    with checkout(replay) as tree:
        sample(argv, ROOT)  # warm-up of both: the file cache, the compiled bytecode
        sample(argv, tree)
        for i in range(repeat):
            print(f"bench: round {i + 1}/{repeat} (prod, then prod-replay) ...", file=sys.stderr, flush=True)
            new.append(sample(argv, ROOT))
            old.append(sample(argv, tree))
    return [summary("prod", new), {**summary("prod-replay", old), "ref": replay}]


def _time(argv: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=True)
    return round(time.perf_counter() - start, 3)


def profile() -> dict[str, Any]:
    """Where one gate run's seconds go (module docstring)."""
    py = sys.executable
    start = time.perf_counter()
    proc = subprocess.Popen(
        [py, "-m", "preflight", "prod", "--json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    phases = []
    assert proc.stderr is not None and proc.stdout is not None
    for line in proc.stderr:
        phases.append((round(time.perf_counter() - start, 2), line.strip().removeprefix("preflight: ")[:100]))
    document = json.loads(proc.stdout.read())
    proc.wait()
    total = round(time.perf_counter() - start, 2)
    from preflight import pulumicli

    cli = pulumicli.find()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
        env = {**os.environ, "PULUMI_BACKEND_URL": project.as_uri(), "PULUMI_CONFIG_PASSPHRASE": "",
               "PULUMI_SKIP_UPDATE_CHECK": "true", "PULUMI_HOME": str(project / "home")}  # fmt: skip
        stack_init = _time([str(cli.path), "stack", "init", "x", "--secrets-provider", "passphrase",
                            "--non-interactive"], project, env)  # fmt: skip
    pack = ROOT / "policies"
    pack_import = (
        "import importlib.util, sys; from pathlib import Path; p = Path('.').resolve(); "
        "s = importlib.util.spec_from_file_location('policies', p / '__init__.py', "
        "submodule_search_locations=[str(p)]); m = importlib.util.module_from_spec(s); "
        "sys.modules['policies'] = m; s.loader.exec_module(m); import policies.registry"
    )
    return {
        "total_s": total,
        "phases": phases,
        "evaluations_s": {e["kind"]: e["seconds"] for e in document["evaluations"]},
        "alone_s": {
            "python_bare": _time([py, "-c", "pass"]),
            "gate_imports": _time(
                [py, "-c", "import preflight.__main__, preflight.gate, preflight.langhost"]
            ),
            "provider_start_and_warm": _time(
                [py, "-c", "from preflight.provider import server; server.warm()"]
            ),
            "pack_imports": _time([str(pack / ".venv" / "bin" / "python"), "-c", pack_import], pack),
            "pulumi_version": _time([str(cli.path), "version"]),
            "pulumi_stack_init": stack_init,
            "program_imports": _time(
                [py, "-c", "import components, stackconfig, pulumi_azure_native.machinelearningservices"]
            ),
        },
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/gate_bench.py", description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=5, help="rounds (each: one sample of each case); default 5")
    p.add_argument("--replay", default=REPLAY, metavar="REF", help=f"the replay's git ref (default {REPLAY})")
    p.add_argument("--profile", action="store_true", help="also print where one run's seconds go")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat: must be at least 1")
    load_before = round(os.getloadavg()[0], 2)
    rows = compare(args.repeat, args.replay)
    load_after = round(os.getloadavg()[0], 2)
    by = {r["name"]: r for r in rows}
    ratio = round(by["prod"]["median_s"] / by["prod-replay"]["median_s"], 2)
    cpu_ratio = round(by["prod"]["cpu_median_s"] / by["prod-replay"]["cpu_median_s"], 2)
    result: dict[str, Any] = {
        "repeat": args.repeat,
        "python": sys.version.split()[0],
        "load_average_1min": {"before": load_before, "after": load_after},
        "cases": rows,
        "target": {"ratio": ratio, "cpu_ratio": cpu_ratio, "limit": 2.0, "met": ratio <= 2.0},
    }
    if args.profile:
        result["profile"] = profile()
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"load average (1 min): {load_before} before, {load_after} after")
        print(f"{'case':<14}{'median s':>10}{'cpu s':>8}  runs (s)")
        for r in rows:
            print(
                f"{r['name']:<14}{r['median_s']:>10.2f}{r['cpu_median_s']:>8.2f}  "
                + ", ".join(map(str, r["runs_s"]))
            )
        verdict = "met" if ratio <= 2.0 else "MISSED"
        print(f"prod / prod-replay: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (target <= 2x wall: {verdict})")
        if args.profile:
            prof = result["profile"]
            print(f"profile: one run, {prof['total_s']} s")
            for at, what in prof["phases"]:
                print(f"  {at:6.2f} s  {what}")
            print(f"  evaluations: {prof['evaluations_s']}")
            print(f"  each alone: {prof['alone_s']}")
    return 0 if ratio <= 2.0 else 1


if __name__ == "__main__":
    sys.exit(main())
