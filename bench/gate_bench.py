"""Benchmark of the offline policy gate (`python -m preflight`): not a test, a measurement with its method.

Method: every sample is a fresh interpreter started with subprocess, timed wall-clock from start to exit
(time.perf_counter around subprocess.run), repeated --repeat times; the median is reported. Each sample also
records its CPU time (user + system of the command and the children it waited for, i.e. the gate and its
policy pack process, from getrusage(RUSAGE_CHILDREN)), which a loaded machine inflates far less than the
wall time, and the run records the 1-minute load average before and after (os.getloadavg).
- baseline: `python -c "import pulumi_azure_native.machinelearningservices, pulumi_policy"`, the imports any
  gate needs at minimum;
- prod-program: `run_program('prod')` alone in a fresh interpreter: the stack program under mocks, which the
  gate cannot avoid (it loads the azure-native modules the baseline's lazy import never executes);
- prod: `python -m preflight prod --json`, the real prod stack (program under mocks, pack process, gRPC), with
  both evaluations (first deploy and update: two program runs, two rounds of Analyze/AnalyzeStack);
- prod-before: the same command in a checkout of `--before REF` (a git worktree in a temporary folder, sharing
  this checkout's virtualenvs), the gate as it was before the two evaluations: one evaluation;
- synthetic-50 / synthetic-500: the gate on generated stacks of 50 and 500 clusters (a valid config from this
  script, written to a temporary folder, with quotas large enough that every pool fits).
Targets: prod within 2x prod-before; 500 clusters within 12x the 50-cluster time.

Usage: .venv/bin/python bench/gate_bench.py [--repeat 3] [--before REF] [--json]
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

import yaml

ROOT = Path(__file__).resolve().parent.parent
SIZES = ("Standard_ND96isr_H100_v5", "Standard_NC24ads_A100_v4", "Standard_NC4as_T4_v3")
BEFORE = "e97bf0d"  # main before the gate replayed two evaluations (issue 10)


def synthetic(clusters: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(stack config, policy config) with `clusters` compliant clusters in eastus."""
    config = {
        "azure-native:location": "eastus",
        "azure-native:subscriptionId": "00000000-0000-0000-0000-000000000000",
        "azml-gpu:workspace": {
            "name": "ws-bench",
            "resource_group": {"name": "rg-bench"},
            "region": "eastus",
            "public_network_access": "Disabled",
        },
        "azml-gpu:clusters": [
            {
                "name": f"c{i:04d}",
                "size": SIZES[i % len(SIZES)],
                "min_instances": 0,
                "max_instances": 2 if SIZES[i % len(SIZES)].startswith("Standard_ND") else 1,
                "idle_time_before_scale_down": 300,
                "tier": "dedicated",
                "ssh": "disabled",
            }
            for i in range(clusters)
        ],
    }
    big = 10**7
    quotas = {
        "eastus": {
            "standardNDSH100v5Family": big,
            "StandardNCADSA100v4Family": big,
            "Standard NCASv3_T4 Family": big,
            "total": big,
            "lowPriority": big,
        }
    }
    return config, {"quota-reservation": {"quotas": quotas}}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def checkout(ref: str):
    """A worktree of `ref` in a temporary folder, with this checkout's virtualenvs linked in."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), ref], cwd=ROOT, check=True)
        try:
            (tree / ".venv").symlink_to(ROOT / ".venv")
            (tree / "policies" / ".venv").symlink_to(ROOT / "policies" / ".venv")
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


def sample(argv: list[str], cwd: Path = ROOT) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of `argv` in `cwd`."""
    cpu = _children_cpu()
    start = time.perf_counter()
    run = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if run.returncode not in (0, 1):  # 1: mandatory violations (the old gate on today's stacks may find some)
        raise SystemExit(
            f"benchmark command failed ({run.returncode}): {' '.join(argv)}\n{run.stderr[-2000:]}"
        )
    return elapsed, cpu


def measure(name: str, argv: list[str], repeat: int, progress: bool, cwd: Path = ROOT) -> dict[str, Any]:
    times, cpus = [], []
    for i in range(repeat):
        if progress:
            print(f"bench: {name} run {i + 1}/{repeat} ...", file=sys.stderr, flush=True)
        elapsed, cpu = sample(argv, cwd)
        times.append(elapsed)
        cpus.append(cpu)
    return {
        "name": name,
        "median_s": statistics.median(times),
        "runs_s": [round(t, 3) for t in times],
        "cpu_median_s": round(statistics.median(cpus), 3),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/gate_bench.py", description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3, help="samples per case (median reported); default 3")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--before",
        default=BEFORE,
        metavar="REF",
        help=f"git ref of the gate to compare prod with (default {BEFORE}: the gate with one evaluation)",
    )
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat: must be at least 1")
    py = sys.executable
    load_before = round(os.getloadavg()[0], 2)
    rows = [
        measure(
            "baseline",
            [py, "-c", "import pulumi_azure_native.machinelearningservices, pulumi_policy"],
            args.repeat,
            True,
        ),
        measure(
            "prod-program",
            [py, "-c", "from preflight.program import run_program; assert run_program('prod').ok"],
            args.repeat,
            True,
        ),
        measure("prod", [py, "-m", "preflight", "prod", "--json"], args.repeat, True),
    ]
    with checkout(args.before) as tree:
        before = measure("prod-before", [py, "-m", "preflight", "prod", "--json"], args.repeat, True, tree)
    rows.append({**before, "ref": args.before})
    with tempfile.TemporaryDirectory() as tmp:
        for clusters in (50, 500):
            name = f"synthetic-{clusters}"
            config, policy = synthetic(clusters)
            stack_file = Path(tmp) / f"Pulumi.{name}.yaml"
            stack_file.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
            policy_file = Path(tmp) / f"{name}.json"
            policy_file.write_text(json.dumps(policy))
            cmd = [
                py,
                "-m",
                "preflight",
                name,
                "--json",
                "--config-file",
                str(stack_file),
                "--policy-config",
                str(policy_file),
            ]
            rows.append({**measure(name, cmd, args.repeat, True), "clusters": clusters})
    load_after = round(os.getloadavg()[0], 2)
    by = {r["name"]: r["median_s"] for r in rows}
    cpu = {r["name"]: r["cpu_median_s"] for r in rows}
    checks = {
        "prod_vs_before": {"ratio": by["prod"] / by["prod-before"], "target": 2.0},
        "500_vs_50": {"ratio": by["synthetic-500"] / by["synthetic-50"], "target": 12.0},
    }
    info = {
        "prod_vs_baseline": round(by["prod"] / by["baseline"], 2),
        "prod_cpu_vs_before_cpu": round(cpu["prod"] / cpu["prod-before"], 2),
        "program_vs_baseline": round(by["prod-program"] / by["baseline"], 2),
        "gate_overhead_s": round(by["prod"] - by["prod-program"], 2),
        "prod_cpu_vs_baseline_cpu": round(cpu["prod"] / cpu["baseline"], 2),
    }
    for check in checks.values():
        check["ratio"] = round(check["ratio"], 2)
        check["met"] = check["ratio"] <= check["target"]
    if args.json:
        print(
            json.dumps(
                {
                    "repeat": args.repeat,
                    "python": sys.version.split()[0],
                    "load_average_1min": {"before": load_before, "after": load_after},
                    "cases": rows,
                    "targets": checks,
                    "info": info,
                },
                indent=2,
            )
        )
    else:
        print(f"load average (1 min): {load_before} before, {load_after} after")
        print(f"{'case':<16}{'median s':>10}{'cpu s':>8}  runs (s)")
        for r in rows:
            runs = ", ".join(f"{t:.2f}" for t in r["runs_s"])
            print(f"{r['name']:<16}{r['median_s']:>10.2f}{r['cpu_median_s']:>8.2f}  {runs}")
        for name, c in checks.items():
            verdict = "met" if c["met"] else "MISSED"
            print(f"{name:<16}{c['ratio']:>10.2f}  target <= {c['target']:.0f}x: {verdict}")
        print(
            f"program alone is {info['program_vs_baseline']:.2f}x the baseline; the gate adds "
            f"{info['gate_overhead_s']:.2f} s to it (pack process, gRPC, plan); in CPU time the gate "
            f"(with its pack process) is {info['prod_cpu_vs_baseline_cpu']:.2f}x the baseline"
        )
    return 0 if all(c["met"] for c in checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
