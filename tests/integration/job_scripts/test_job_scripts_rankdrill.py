"""`python -m jobs local train --sigterm-at STEP|random --sigterm-rank R`: the drill signals one rank at a
logged step; both ranks stop at the same step with a checkpoint, and a resume reaches the uninterrupted
run's weights. Real processes, gloo on CPU."""

from __future__ import annotations

import json
import re
import subprocess

from tests.jobs.jobs_util import PY, REPO, TRAIN_ARGS, base_env

from .jobscripts_util import fingerprint, track

STEPS = int(TRAIN_ARGS[TRAIN_ARGS.index("--steps") + 1])


def _local(*argv: str, timeout: float = 300) -> tuple[int, str, str]:
    p = track(
        subprocess.Popen(
            [PY, "-m", "jobs", "local", "train", *argv],
            cwd=REPO,
            env=base_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    )
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def test_sigterm_drill_at_a_step_stops_both_ranks_there_and_resume_matches(tmp_path):
    ckpt = tmp_path / "ckpt"
    args = [*TRAIN_ARGS, "--ckpt", str(ckpt), "--ckpt-every", "1000"]  # only the SIGTERM checkpoint
    code, out, err = _local(
        "--procs-per-node",
        "2",
        "--logs",
        str(tmp_path / "a"),
        "--sigterm-at",
        "10",
        "--sigterm-rank",
        "1",
        "--json",
        "--",
        *args,
    )
    assert code == 143, err[-3000:]
    result = json.loads(out)
    assert result["drill"]["rank"] == 1 and result["drill"]["target_step"] == 10
    assert 10 <= result["drill"]["sigterm_at_step"] < STEPS
    logs = [(tmp_path / "a" / "user_logs" / f"std_log_process_{r}.txt").read_text() for r in (0, 1)]
    stopped = int(re.search(r"interrupted by signal 15 after step (\d+)/", logs[1]).group(1))
    assert stopped >= result["drill"]["sigterm_at_step"]
    assert all(f"interrupted by signal 15 after step {stopped}/{STEPS}" in log for log in logs)
    assert [p.name for p in ckpt.glob("step_*")] == [f"step_{stopped:08d}"]
    assert (ckpt / f"step_{stopped:08d}" / "commit.json").exists()

    code, out, err = _local("--procs-per-node", "2", "--logs", str(tmp_path / "b"), "--", *args)
    assert code == 0 and f"at step {stopped}" in out, err[-3000:]
    code, ref, err = _local(
        "--procs-per-node",
        "2",
        "--logs",
        str(tmp_path / "ref"),
        "--",
        *TRAIN_ARGS,
        "--ckpt",
        str(tmp_path / "ref-ckpt"),
    )
    assert code == 0, err[-3000:]
    assert fingerprint(out) == fingerprint(ref)


def test_random_step_is_seeded_and_inside_the_run(tmp_path):
    targets = []
    for run in ("r1", "r2"):
        code, out, err = _local(
            "--procs-per-node",
            "2",
            "--logs",
            str(tmp_path / run),
            "--sigterm-at",
            "random",
            "--seed",
            "7",
            "--json",
            "--",
            *TRAIN_ARGS,
        )
        assert code == 143, err[-3000:]
        targets.append(json.loads(out)["drill"]["target_step"])
    assert targets[0] == targets[1] and 1 <= targets[0] < STEPS
