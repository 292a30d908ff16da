"""train.py under faults, for real: 2 ranks, gloo on CPU, kill -9, SIGTERM, a lost peer, damaged files.

Every resumed run must end with the same weights fingerprint as one uninterrupted run of the same length.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from jobscripts_util import (
    PY,
    REPO,
    SRC,
    TRAIN_ARGS,
    LocalRun,
    base_env,
    fingerprint,
    last_step,
    run_group,
    start_ranks,
    wait_for,
)

sys.path.insert(0, str(SRC))
import checkpointing as ck  # noqa: E402
from metrics import StepMetrics  # noqa: E402

from localml.mount import BlobMount, MountOptions  # noqa: E402

STEPS = int(TRAIN_ARGS[TRAIN_ARGS.index("--steps") + 1])


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[str, object]:
    """One uninterrupted 2-rank run through `python -m jobs local train`: its fingerprint and folder."""
    root = tmp_path_factory.mktemp("reference")
    run = LocalRun([*TRAIN_ARGS, "--ckpt", str(root / "ckpt")], procs=2, logs=root)
    rc, out, err = run.finish()
    assert rc == 0, out + err
    return fingerprint(out), root


def test_reference_run_logs_metrics_and_ends_with_the_fingerprint(reference):
    digest, root = reference
    log0 = (root / "user_logs" / "std_log_process_0.txt").read_text()
    assert fingerprint(log0) == digest  # rank 0's own log ends with exactly the line
    assert re.search(
        r"^step 36/36 \| loss \d+\.\d{4} \| [\d.]+ ms/step \| tok/s/gpu [\d,]+ \| mfu n/a$", log0, re.M
    )
    records = [r for line in log0.splitlines() if (r := StepMetrics.from_line(line))]
    assert [r.step for r in records] == list(range(1, STEPS + 1))  # --log-every 1
    assert {(r.steps, r.world_size, r.mfu) for r in records} == {(STEPS, 2, None)}
    assert all(r.tokens_per_s_per_gpu > 0 and r.step_ms > 0 and 0 < r.lr <= 1e-3 for r in records)
    assert records[-1].text() in log0.splitlines()  # the human line renders the same record
    losses = [r.loss for r in records]
    assert sum(losses[-5:]) < sum(losses[:5])  # it learns
    names = sorted(p.name for p in (root / "ckpt").iterdir())
    assert names == [
        f"step_000000{s}.pt{part}"
        for s in (33, 36)
        for part in (
            "",
            ".sha256",
            ".shard-00000-of-00002",
            ".shard-00000-of-00002.sha256",
            ".shard-00001-of-00002",
            ".shard-00001-of-00002.sha256",
        )
    ]


def test_two_ranks_write_two_disjoint_shards_whose_union_is_the_state(reference):
    """Each rank wrote one shard; together they hold every tensor of the state exactly once, and the
    joined state is the model and optimizer the run had (its weights give the run's fingerprint)."""
    folder = reference[1] / "ckpt"
    manifest = ck.torch.load(folder / "step_00000036.pt", weights_only=True)
    assert manifest["__shards__"] == 2
    _, leaves = ck.split_state(ck.load(folder / "step_00000036.pt"))
    shards = [ck.torch.load(folder / ck.shard_name(36, r, 2), weights_only=True)["leaves"] for r in (0, 1)]
    assert all(shards) and not set(shards[0]) & set(shards[1])
    assert set(shards[0]) | set(shards[1]) == set(range(len(leaves)))
    sizes = [sum(t.numel() * t.element_size() for t in sh.values()) for sh in shards]
    assert max(sizes) <= 1.5 * min(sizes)  # balanced by bytes
    state = ck.load(folder / "step_00000036.pt")
    assert state["step"] == 36 and len(state["rng"]) == 2 and "lm_head.weight" in state["model"]


def test_a_step_with_a_shard_missing_its_marker_resumes_from_the_previous_step(reference, tmp_path):
    ckpt = tmp_path / "ckpt"
    shutil.copytree(reference[1] / "ckpt", ckpt)
    (ckpt / "step_00000036.pt.shard-00001-of-00002.sha256").unlink()  # rank 1 killed before its marker
    run = LocalRun([*TRAIN_ARGS, "--ckpt", str(ckpt)], procs=2, logs=tmp_path)
    rc, out, err = run.finish()
    assert rc == 0, out + err
    assert (
        f"warning: skipping damaged checkpoint {ckpt / 'step_00000036.pt'}: shard "
        "step_00000036.pt.shard-00001-of-00002: no .sha256 completion marker" in out
    )
    assert f"resumed from {ckpt / 'step_00000033.pt'} at step 33" in out
    assert fingerprint(out) == reference[0]


def test_one_process_resumes_a_two_shard_checkpoint_as_the_same_state_in_one_file(reference, tmp_path):
    """World size 1 joins the 2 shards; the same state saved in the one-file format (today's, and what a
    1-process run writes) resumes to the same final weights: back-compat and resharding at once."""
    sharded, single = tmp_path / "sharded", tmp_path / "single"
    shutil.copytree(reference[1] / "ckpt", sharded)
    for p in sharded.glob("step_00000036.*"):
        p.unlink()
    single.mkdir()
    ck.save_checkpoint(ck.load(sharded / "step_00000033.pt"), single / "step_00000033.pt")
    prints = []
    for folder in (sharded, single):
        run = LocalRun([*TRAIN_ARGS, "--ckpt", str(folder)], procs=1, logs=tmp_path / f"logs-{folder.name}")
        rc, out, err = run.finish()
        assert rc == 0, out + err
        assert f"resumed from {folder / 'step_00000033.pt'} at step 33" in out
        assert "was written by 2 ranks, this run has 1" in out
        prints.append(fingerprint(out))
    assert prints[0] == prints[1]
    assert sorted(p.name for p in single.iterdir()) == [  # one process writes one file per step
        "step_00000033.pt",
        "step_00000033.pt.sha256",
        "step_00000036.pt",
        "step_00000036.pt.sha256",
    ]


def without_model_flags(args: list[str]) -> list[str]:
    """TRAIN_ARGS less every flag that sizes the model (and --dropout): a resume must take them all from
    the checkpoint."""
    model_flags = {"--n-layer", "--n-head", "--n-embd", "--block-size", "--vocab-size", "--dropout"}
    out, it = [], iter(args)
    for a in it:
        if a in model_flags:
            next(it)
        else:
            out.append(a)
    return out


def test_resume_takes_the_model_config_from_the_checkpoint(reference, tmp_path):
    """nanoGPT's rule: the checkpoint's config wins over the defaults, so resuming with the model flags
    left out ends on the uninterrupted run's weights; the checkpoint holds no `data` key (the data
    position is the step)."""
    ckpt = tmp_path / "ckpt"
    shutil.copytree(reference[1] / "ckpt", ckpt)
    for path in ckpt.glob("step_00000036.*"):
        path.unlink()
    saved = ck.load(ckpt / "step_00000033.pt")
    assert saved["config"] == {
        "vocab_size": 2048,
        "block_size": 32,
        "n_layer": 2,
        "n_head": 2,
        "n_embd": 128,
        "dropout": 0.1,
    }
    assert sorted(saved) == ["config", "model", "optimizer", "rng", "step", "total_steps"]
    run = LocalRun([*without_model_flags(TRAIN_ARGS), "--ckpt", str(ckpt)], procs=2, logs=tmp_path)
    rc, out, err = run.finish()
    assert rc == 0, out + err
    assert f"resumed from {ckpt / 'step_00000033.pt'} at step 33" in out
    assert fingerprint(out) == reference[0]


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (
            ["--n-layer", "3"],
            "--n-layer 3 does not match the checkpoint {ckpt}/step_00000036.pt, written with --n-layer 2: "
            "leave --n-layer out (or pass --n-layer 2) to resume it",
        ),
        (["--vocab-size", "512"], "--vocab-size 512 does not match the checkpoint"),
        (["--n-embd", "64"], "written with --n-embd 128"),
        (["--block-size", "16"], "written with --block-size 32"),
        (["--n-head", "4"], "written with --n-head 2"),
    ],
)
def test_resume_refuses_a_model_flag_that_does_not_match_the_checkpoint(reference, tmp_path, flags, needle):
    """One process is enough: the check runs before training, on every rank alike. Nothing is written."""
    ckpt = tmp_path / "ckpt"
    shutil.copytree(reference[1] / "ckpt", ckpt)
    before = sorted(p.name for p in ckpt.iterdir())
    p = subprocess.run(
        [PY, str(SRC / "train.py"), *without_model_flags(TRAIN_ARGS), "--ckpt", str(ckpt), *flags],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stdout + p.stderr
    assert p.stderr.startswith(f"train.py: error: {flags[0]} {flags[1]} does not match the checkpoint {ckpt}")
    assert needle.format(ckpt=ckpt) in p.stderr
    assert sorted(q.name for q in ckpt.iterdir()) == before


def test_torchrun_gives_the_same_fingerprint_as_the_launcher(reference, tmp_path):
    p = run_group(
        [
            PY,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "2",
            str(SRC / "train.py"),
            *TRAIN_ARGS,
        ],
        timeout=180,
        cwd=tmp_path,
        env=base_env(),
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert fingerprint(p.stdout) == reference[0]


def test_kill_9_at_random_points_and_mid_write_then_resume_matches(reference, tmp_path):
    """kill -9 every process of the run (as a VM loss does) at seeded random steps, during a checkpoint's
    write and during its upload, on the emulated blob mount (localml.blobfs); each run gets a new node's
    mount of the same store, and the last one resumes to the uninterrupted run's weights."""
    rnd = random.Random(20261130)
    store = tmp_path / "store"
    kills: list[str] = []
    started: list[BlobMount] = []

    def node(name: str, **options) -> BlobMount:
        mount = BlobMount(store, tmp_path / f"mnt-{name}", tmp_path / f"node-{name}", MountOptions(**options))
        started.append(mount)
        return mount.start()

    def args(mount: BlobMount) -> list[str]:
        return [*TRAIN_ARGS, "--ckpt", str(mount.mountpoint)]

    def kill_at_random_step(name: str) -> None:
        before = last_complete(store)
        target = before + rnd.randint(2, 7)
        mount = node(name)
        run = LocalRun(args(mount), procs=2, logs=tmp_path / name)
        run.wait_step(target)
        # Each run makes progress: at least one new complete checkpoint before the kill.
        wait_for(lambda: last_complete(store) > before, 60, "a new complete checkpoint")
        time.sleep(rnd.uniform(0.0, 0.05))
        assert run.kill9() == -signal.SIGKILL
        mount.unmount()
        kills.append(f"after step {target}")

    def kill_mid_write(name: str) -> bool:
        """Processes killed inside torch.save: the kernel closes the file, the mount uploads the part."""
        mount = node(name)
        run = LocalRun(args(mount), procs=2, logs=tmp_path / name)
        wait_for(
            lambda: run.proc.poll() is not None or bool(mount.state().get("writing")),
            120,
            "a checkpoint write",
            poll=0.001,
        )
        writing = mount.state().get("writing", [])
        assert run.kill9() == -signal.SIGKILL
        mount.unmount()
        kills.append(f"during the write of {writing}")
        for path in store.glob("step_*.pt"):  # nothing that looks complete is damaged
            assert ck.verify(path) in (None, "no .sha256 completion marker (its write was interrupted)")
        cut = [store / w.lstrip("/") for w in writing]
        return any(ck.verify(p) is not None for p in cut if p.exists())  # the write really was cut short

    def lose_node_mid_upload(name: str) -> None:
        """The node is lost while its mount uploads a checkpoint: the upload never commits."""
        before = last_complete(store)
        mount = node(name, upload_rate=20e6)
        run = LocalRun(args(mount), procs=2, logs=tmp_path / name)
        wait_for(
            lambda: last_complete(store) > before and bool(mount.state().get("uploading")),
            120,
            "an upload after a new complete checkpoint",
            poll=0.001,
        )
        uploading = list(mount.state().get("uploading", {}))
        mount.lose()
        assert run.kill9() == -signal.SIGKILL
        kills.append(f"node lost during the upload of {uploading}")
        for name_ in uploading:
            assert not (store / name_.lstrip("/")).with_name(name_.lstrip("/") + ".sha256").exists()

    try:
        kill_at_random_step("run1")
        assert any(kill_mid_write(f"write{i}") for i in range(3)), "never killed during a checkpoint write"
        lose_node_mid_upload("upload")
        kill_at_random_step("run2")
        assert len(kills) >= 4
        complete = [p.name for p in store.glob("*.pt") if (store / f"{p.name}.sha256").exists()]
        assert complete, f"no complete checkpoint survived the kills ({kills}): nothing to resume from"
        mount = node("final")
        final = LocalRun(args(mount), procs=2, logs=tmp_path / "final")
        rc, out, err = final.finish()
        mount.unmount()
    finally:
        for m in started:  # no daemon outlives the test, whatever failed
            m.lose()
    assert rc == 0, out + err
    assert f"resumed from {mount.mountpoint / max(complete)}" in out
    assert fingerprint(out) == reference[0], f"kills: {kills}"


def last_complete(ckpt) -> int:
    """The newest checkpoint step whose .sha256 marker exists, 0 before the first."""
    if not ckpt.exists():
        return 0
    steps = [
        int(m.group(1)) for p in ckpt.iterdir() if (m := re.fullmatch(r"step_(\d+)\.pt\.sha256", p.name))
    ]
    return max(steps, default=0)


def last_step_of(ckpt) -> int:
    """The newest checkpoint's step (complete or not), 0 before the first."""
    if not ckpt.exists():
        return 0
    steps = [int(m.group(1)) for p in ckpt.iterdir() if (m := re.fullmatch(r"step_(\d+)\.pt", p.name))]
    return max(steps, default=0)


def test_truncated_newest_checkpoint_is_skipped_and_the_previous_one_used(reference, tmp_path):
    ckpt = tmp_path / "ckpt"
    shutil.copytree(reference[1] / "ckpt", ckpt)
    newest = ckpt / "step_00000036.pt"
    shard = ckpt / ck.shard_name(36, 0, 2)  # the bytes are in the shards; the manifest is small
    shard.write_bytes(shard.read_bytes()[:100_000])
    run = LocalRun([*TRAIN_ARGS, "--ckpt", str(ckpt)], procs=2, logs=tmp_path)
    rc, out, err = run.finish()
    assert rc == 0, out + err
    assert (
        f"warning: skipping damaged checkpoint {newest}: shard {shard.name}: "
        "sha256 mismatch (truncated or corrupt)" in out
    )
    assert f"resumed from {ckpt / 'step_00000033.pt'} at step 33" in out
    assert fingerprint(out) == reference[0]


def test_sigterm_to_one_rank_checkpoints_and_both_exit_nonzero(reference, tmp_path):
    ckpt = tmp_path / "ckpt"
    args = [*TRAIN_ARGS, "--ckpt", str(ckpt), "--ckpt-every", "1000"]  # only the SIGTERM checkpoint
    procs = start_ranks("train.py", args, 2, tmp_path / "logs")
    wait_for(lambda: last_step(tmp_path / "logs" / "rank0.txt") >= 5, 120, "step 5")
    procs[1].send_signal(signal.SIGTERM)  # rank 0 gets no signal: the ranks must agree on stopping
    codes = [p.wait(timeout=60) for p in procs]
    assert codes == [143, 143]
    logs = [(tmp_path / "logs" / f"rank{r}.txt").read_text() for r in (0, 1)]
    stopped = int(re.search(r"interrupted by signal 15 after step (\d+)/", logs[0] + logs[1]).group(1))
    for log in logs:
        assert f"interrupted by signal 15 after step {stopped}/{STEPS}" in log
        assert "exiting 143: the run did NOT complete" in log
        assert "final parameters sha256" not in log and "Traceback" not in log
    assert [p.name for p in sorted(ckpt.glob("*.pt"))] == [f"step_{stopped:08d}.pt"]
    resumed = LocalRun(args, procs=2, logs=tmp_path / "resume")
    rc, out, err = resumed.finish()
    assert rc == 0 and f"at step {stopped}" in out, out + err
    assert fingerprint(out) == reference[0]


@pytest.mark.parametrize("killed", [1, 0])  # rank 0 also hosts the rendezvous store
def test_killing_one_rank_makes_the_survivor_fail_fast_saying_a_peer_was_lost(tmp_path, killed):
    survivor = 1 - killed
    procs = start_ranks("train.py", [*TRAIN_ARGS, "--steps", "100000"], 2, tmp_path)
    wait_for(lambda: last_step(tmp_path / "rank0.txt") >= 3, 120, "step 3")
    procs[killed].send_signal(signal.SIGKILL)
    t0 = time.monotonic()
    code = procs[survivor].wait(timeout=30 + 30 + 10)  # collective timeout (0.5 min) + 30 s, plus slack
    elapsed = time.monotonic() - t0
    log = (tmp_path / f"rank{survivor}.txt").read_text()
    assert code != 0 and elapsed < 60, (code, elapsed)
    assert f"rank {survivor}: error: lost a peer" in log and "Traceback" not in log, log


def test_bad_flags_name_the_flag_without_a_traceback(tmp_path):
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("")
    for flags, needle in (
        (["--data", str(tmp_path / "none")], "--data"),
        (["--n-embd", "65", "--n-head", "2"], "--n-embd 65 must be a multiple of --n-head 2"),
        (["--ckpt", str(a_file)], f"--ckpt {a_file}: exists and is not a folder"),
        (["--ste", "5"], "unrecognized arguments: --ste 5"),  # no abbreviations: --steps is the job's
    ):
        p = subprocess.run(
            [PY, str(SRC / "train.py"), *flags], env=base_env(), capture_output=True, text=True, timeout=60
        )
        assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_token_shards_are_read_and_out_of_vocab_ids_are_reported(tmp_path):
    import numpy as np

    data = tmp_path / "data"
    data.mkdir()
    rng = np.random.default_rng(0)
    rng.integers(0, 500, size=5000, dtype=np.uint16).tofile(data / "a.bin")
    rng.integers(0, 500, size=3000, dtype=np.uint16).tofile(data / "b.bin")
    env = base_env()
    ok = subprocess.run(
        [PY, str(SRC / "train.py"), "--data", str(data), "--steps", "3", "--vocab-size", "512"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert ok.returncode == 0, ok.stderr
    assert fingerprint(ok.stdout)
    bad = subprocess.run(
        [PY, str(SRC / "train.py"), "--data", str(data), "--steps", "3", "--vocab-size", "256"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert bad.returncode != 0 and "is >= --vocab-size 256" in bad.stderr and "Traceback" not in bad.stderr
    assert os.path.exists(data / "a.bin")


def test_ctrl_c_on_jobs_local_checkpoints_and_reports_cancelled(tmp_path):
    """SIGINT to the whole process group (a terminal's Ctrl-C): ranks checkpoint, the launcher says 130."""
    ckpt = tmp_path / "ckpt"
    run = LocalRun([*TRAIN_ARGS, "--steps", "100000", "--ckpt", str(ckpt)], procs=2, logs=tmp_path)
    run.wait_step(4)
    os.killpg(run.proc.pid, signal.SIGINT)
    rc, out, err = run.finish(timeout=60)
    assert rc == 130, out + err
    assert "[jobs local] cancelled" in err and "interrupted; logs in" in err
    stopped = int(re.search(r"interrupted by signal 2 after step (\d+)/", out).group(1))
    assert (ckpt / f"step_{stopped:08d}.pt.sha256").exists()
    for rank in (0, 1):
        log = (tmp_path / "user_logs" / f"std_log_process_{rank}.txt").read_text()
        assert "exiting 130: the run did NOT complete" in log and "Traceback" not in log
