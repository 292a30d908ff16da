"""train.py under faults, for real: 2 FSDP ranks, gloo on CPU, kill -9, SIGTERM, a lost peer, damaged files,
a rank whose checkpoint write fails, resumes at other world sizes.

Every resumed run at the same world size must end with the same weights fingerprint as one uninterrupted
run of the same length.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import time

import checkpointing as ck
import pytest
from metrics import StepMetrics
from torch.distributed.checkpoint import FileSystemReader

from doubles.localml.mount import BlobMount, MountOptions
from tests.jobs.jobs_util import PY, REPO, SRC, TRAIN_ARGS, base_env

from .jobscripts_util import LocalRun, fingerprint, last_step, run_group, start_ranks, wait_for

STEPS = int(TRAIN_ARGS[TRAIN_ARGS.index("--steps") + 1])


#: What DCP writes for 2 ranks (one shard file each, then its index) and our commit marker after them.
STEP_FILES = [".metadata", "__0_0.distcp", "__1_0.distcp", "commit.json"]
CONFIG = {  # TRAIN_ARGS over the tiny preset (model.py / llamaconfig.py)
    "vocab_size": 2048,
    "block_size": 32,
    "n_layer": 2,
    "n_head": 4,
    "n_kv_head": 2,
    "n_embd": 128,
    "ffn_hidden": 192,
    "rope_theta": 10000.0,
    "norm_eps": 1e-5,
    "tie_embeddings": False,
    "rope_scaling": None,
    "max_position_embeddings": None,
}


def listing(folder) -> dict[str, list[str]]:
    return {p.name: sorted(q.name for q in p.iterdir()) for p in sorted(folder.iterdir())}


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
    assert listing(root / "ckpt") == {"step_00000033": STEP_FILES, "step_00000036": STEP_FILES}


def test_each_rank_writes_its_shard_and_the_commit_records_the_run(reference):
    """DCP's metadata indexes both ranks' files, every byte range inside them; the commit marker names the
    step, the world size and the model config a resume rebuilds the model from."""
    folder = reference[1] / "ckpt" / "step_00000036"
    record = ck.read_commit(folder)
    assert {k: v for k, v in record.items() if k != "saved_at"} == {
        "step": 36,
        "world_size": 2,
        "total_steps": STEPS,
        "config": CONFIG,
    }
    meta = FileSystemReader(folder).read_metadata()
    files = {info.relative_path for info in meta.storage_data.values()}
    assert files == {"__0_0.distcp", "__1_0.distcp"}
    keys = set(meta.state_dict_metadata)
    assert "model.model.layers.1.self_attn.k_proj.weight" in keys and "model.lm_head.weight" in keys
    assert "optimizer.state.model.embed_tokens.weight.exp_avg" in keys
    assert ck.verify(folder) is None


def test_a_step_with_a_shard_missing_resumes_from_the_previous_step(reference, tmp_path):
    ckpt = tmp_path / "ckpt"
    shutil.copytree(reference[1] / "ckpt", ckpt)
    (ckpt / "step_00000036" / "__1_0.distcp").unlink()  # rank 1's node lost before its upload
    run = LocalRun([*TRAIN_ARGS, "--ckpt", str(ckpt)], procs=2, logs=tmp_path)
    rc, out, err = run.finish()
    assert rc == 0, out + err
    assert (
        f"warning: skipping incomplete checkpoint {ckpt / 'step_00000036'}: shard __1_0.distcp is missing"
        in out
    )
    assert f"resumed from {ckpt / 'step_00000033'} at step 33" in out
    assert fingerprint(out) == reference[0]


@pytest.mark.parametrize("procs", [1, 4])
def test_a_two_rank_checkpoint_loads_exactly_at_another_world_size(reference, tmp_path, procs):
    """1 and 4 ranks load the 2-rank step 36 resharded: with no step left to run, the weights they hold
    are the uninterrupted run's, bit for bit."""
    ckpt = tmp_path / "ckpt"
    shutil.copytree(reference[1] / "ckpt", ckpt)
    run = LocalRun([*TRAIN_ARGS, "--ckpt", str(ckpt)], procs=procs, logs=tmp_path)
    rc, out, err = run.finish()
    assert rc == 0, out + err
    assert f"was written by 2 ranks, this run has {procs}: DCP reshards it" in out
    assert f"resumed from {ckpt / 'step_00000036'} at step 36" in out
    assert fingerprint(out) == reference[0]


def test_one_process_continues_a_two_rank_checkpoint_and_writes_its_own(reference, tmp_path):
    ckpt = tmp_path / "ckpt"
    shutil.copytree(reference[1] / "ckpt", ckpt)
    shutil.rmtree(ckpt / "step_00000036")
    run = LocalRun([*TRAIN_ARGS, "--ckpt", str(ckpt)], procs=1, logs=tmp_path)
    rc, out, err = run.finish()
    assert rc == 0, out + err
    assert f"resumed from {ckpt / 'step_00000033'} at step 33" in out and "step 36/36" in out
    assert listing(ckpt)["step_00000036"] == [".metadata", "__0_0.distcp", "commit.json"]
    assert ck.read_commit(ckpt / "step_00000036")["world_size"] == 1


def test_a_rank_whose_shard_write_fails_fails_the_save_and_the_last_good_checkpoint_survives(
    reference, tmp_path
):
    """Rank 1 cannot create its shard of step 9 (a directory stands where the file goes). The save fails on
    every rank, the run exits 1 naming the step, step 9 is never committed, and --keep 1 retention has not
    deleted step 6, the last good one. Resubmitted, the run resumes from step 6 and ends on the weights."""
    ckpt = tmp_path / "ckpt"
    (ckpt / "step_00000009" / "__1_0.distcp").mkdir(parents=True)
    args = [*TRAIN_ARGS, "--ckpt", str(ckpt), "--keep", "1"]
    rc, out, err = LocalRun(args, procs=2, logs=tmp_path / "failed").finish()
    assert rc == 1, out + err
    log1 = (tmp_path / "failed" / "user_logs" / "std_log_process_1.txt").read_text()
    assert f"rank 1: error: writing checkpoint {ckpt / 'step_00000009'} failed" in log1, log1[-3000:]
    assert "Traceback" not in out + err
    assert not (ckpt / "step_00000009" / "commit.json").exists()
    assert ck.verify(ckpt / "step_00000006") is None
    assert [p.name for p in ckpt.iterdir() if (p / "commit.json").exists()] == ["step_00000006"]
    (ckpt / "step_00000009" / "__1_0.distcp").rmdir()
    rc, out, err = LocalRun(args, procs=2, logs=tmp_path / "resumed").finish()
    assert rc == 0, out + err
    assert f"resumed from {ckpt / 'step_00000006'} at step 6" in out
    assert fingerprint(out) == reference[0]


def without_model_flags(args: list[str]) -> list[str]:
    """TRAIN_ARGS less every flag that sizes the model: a resume must take them all from the checkpoint."""
    model_flags = {
        "--n-layer",
        "--n-head",
        "--n-kv-head",
        "--n-embd",
        "--ffn-hidden",
        "--block-size",
        "--vocab-size",
    }
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
    shutil.rmtree(ckpt / "step_00000036")
    assert ck.read_commit(ckpt / "step_00000033")["config"] == CONFIG
    run = LocalRun([*without_model_flags(TRAIN_ARGS), "--ckpt", str(ckpt)], procs=2, logs=tmp_path)
    rc, out, err = run.finish()
    assert rc == 0, out + err
    assert f"resumed from {ckpt / 'step_00000033'} at step 33" in out
    assert fingerprint(out) == reference[0]


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (
            ["--n-layer", "3"],
            "--n-layer 3 does not match the checkpoint {ckpt}/step_00000036, written with --n-layer 2: "
            "leave --n-layer out (or pass --n-layer 2) to resume it",
        ),
        (["--vocab-size", "512"], "--vocab-size 512 does not match the checkpoint"),
        (["--n-embd", "64"], "written with --n-embd 128"),
        (["--block-size", "16"], "written with --block-size 32"),
        (["--n-head", "8"], "written with --n-head 4"),
        (["--n-kv-head", "4"], "written with --n-kv-head 2"),
        (["--ffn-hidden", "256"], "written with --ffn-hidden 192"),
        (["--model", "small"], "leave --model out to resume it"),
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
        """Processes killed inside DCP's write: the kernel closes the file, the mount uploads the part."""
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
        for folder in store.glob("step_*"):  # nothing that looks committed is damaged
            assert ck.verify(folder) in (None, "no commit.json marker (its save did not finish)")
        cut = [(store / w.lstrip("/")).parent for w in writing]
        return any(ck.verify(f) is not None for f in cut if f.exists())  # the write really was cut short

    def lose_node_mid_upload(name: str) -> None:
        """The node is lost while its mount uploads a checkpoint: the upload never commits."""
        before = last_complete(store)
        mount = node(name, upload_rate=20e6)
        run = LocalRun(args(mount), procs=2, logs=tmp_path / name)
        wait_for(
            lambda: (
                run.proc.poll() is not None
                or (last_complete(store) > before and bool(mount.state().get("uploading")))
            ),
            120,
            "an upload after a new complete checkpoint",
            poll=0.001,
        )
        assert run.proc.poll() is None, (
            f"the run ended (from step {before}): {''.join(run.out + run.err)[-3000:]}"
        )
        uploading = list(mount.state().get("uploading", {}))
        mount.lose()
        assert run.kill9() == -signal.SIGKILL
        kills.append(f"node lost during the upload of {uploading}")
        # A step whose shard was still uploading was never committed. (Only shards: the tiny .metadata and
        # commit.json can finish uploading between reading the mount's state and losing the node.)
        for name_ in (n for n in uploading if n.endswith(".distcp")):
            assert not ((store / name_.lstrip("/")).parent / "commit.json").exists(), name_

    try:
        kill_at_random_step("run1")
        assert any(kill_mid_write(f"write{i}") for i in range(3)), "never killed during a checkpoint write"
        lose_node_mid_upload("upload")
        kill_at_random_step("run2")
        assert len(kills) >= 4
        complete = [p.name for p in store.glob("step_*") if (p / "commit.json").exists()]
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
    """The newest checkpoint step whose commit marker exists, 0 before the first."""
    if not ckpt.exists():
        return 0
    steps = [
        int(m.group(1))
        for p in ckpt.iterdir()
        if (m := re.fullmatch(r"step_(\d+)", p.name)) and (p / "commit.json").exists()
    ]
    return max(steps, default=0)


def test_truncated_newest_checkpoint_is_skipped_and_the_previous_one_used(reference, tmp_path):
    ckpt = tmp_path / "ckpt"
    shutil.copytree(reference[1] / "ckpt", ckpt)
    newest = ckpt / "step_00000036"
    shard = newest / "__0_0.distcp"
    size = shard.stat().st_size
    shard.write_bytes(shard.read_bytes()[:100_000])
    run = LocalRun([*TRAIN_ARGS, "--ckpt", str(ckpt)], procs=2, logs=tmp_path)
    rc, out, err = run.finish()
    assert rc == 0, out + err
    assert (
        f"warning: skipping incomplete checkpoint {newest}: shard __0_0.distcp is truncated (100000 of "
        in out
    )
    assert f"resumed from {ckpt / 'step_00000033'} at step 33" in out
    assert size > 100_000
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
    assert [p.name for p in sorted(ckpt.glob("step_*"))] == [f"step_{stopped:08d}"]
    assert ck.verify(ckpt / f"step_{stopped:08d}") is None
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
    assert (ckpt / f"step_{stopped:08d}" / "commit.json").exists()
    for rank in (0, 1):
        log = (tmp_path / "user_logs" / f"std_log_process_{rank}.txt").read_text()
        assert "exiting 130: the run did NOT complete" in log and "Traceback" not in log
