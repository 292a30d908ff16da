"""DATASET_UNMOUNT_TIMEOUT_SECONDS of a train job: from the checkpoint size at 60 MiB/s, never under 30 s."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from jobs import unmount
from jobs.cli import main

FIXTURE = str(Path(__file__).parent / "fixtures" / "outputs-prod.json")
SRC = Path(__file__).resolve().parents[2] / "jobs" / "src"


@pytest.mark.parametrize(
    "args",
    [(), ("--n-layer", "3", "--n-embd", "96", "--vocab-size", "1000", "--block-size", "32", "--n-head", "4")],
)
def test_parameter_count_is_the_models(args):
    """The count the timeout uses is what train.py's model has, with train.py's own defaults."""
    sys.path.insert(0, str(SRC))
    import train
    from model import GPT, GPTConfig

    a = train.parse_args(list(args))
    model = GPT(GPTConfig(a.vocab_size, a.block_size, a.n_layer, a.n_head, a.n_embd, a.dropout))
    assert unmount.model_params(args) == sum(p.numel() for p in model.parameters())


def test_timeout_is_checkpoint_bytes_over_the_write_rate_with_a_30_s_floor():
    assert unmount.timeout_s(0) == 30 and unmount.timeout_s(30 * 60 * 2**20) == 30
    assert unmount.timeout_s(30 * 60 * 2**20 + 1) == 31
    # The ~1.1B-parameter GPT of bench/gpu_train_smoke.sh: 13.4 GB of weights + AdamW at 60 MiB/s.
    big = (
        "--n-layer",
        "20",
        "--n-head",
        "16",
        "--n-embd",
        "2048",
        "--block-size",
        "2048",
        "--vocab-size",
        "50304",
    )
    params = unmount.model_params(big)
    assert 1.1e9 < params < 1.15e9
    assert unmount.train_env(big) == {"DATASET_UNMOUNT_TIMEOUT_SECONDS": str(-(-params * 12 // (60 * 2**20)))}
    assert int(unmount.train_env(big)["DATASET_UNMOUNT_TIMEOUT_SECONDS"]) > 200


def test_render_shows_it_in_the_train_jobs_environment(tmp_path):
    out = tmp_path / "job.yml"
    argv = [
        "render",
        "train",
        "--cluster",
        "h100-x4",
        "--run-name",
        "r1",
        "--outputs",
        FIXTURE,
        "--out",
        str(out),
        "--",
        "--n-layer",
        "20",
        "--n-head",
        "16",
        "--n-embd",
        "2048",
        "--block-size",
        "2048",
        "--vocab-size",
        "50304",
    ]
    assert main(argv) == 0
    env = yaml.safe_load(out.read_text())["environment_variables"]
    assert (
        env["DATASET_UNMOUNT_TIMEOUT_SECONDS"]
        == unmount.train_env(tuple(argv[argv.index("--") + 1 :]))["DATASET_UNMOUNT_TIMEOUT_SECONDS"]
    )
    assert env["NCCL_DEBUG"] == "INFO"
    small = tmp_path / "small.yml"
    assert (
        main(
            [
                "render",
                "train",
                "--cluster",
                "h100-x4",
                "--run-name",
                "r2",
                "--outputs",
                FIXTURE,
                "--out",
                str(small),
            ]
        )
        == 0
    )
    small_env = yaml.safe_load(small.read_text())["environment_variables"]
    assert small_env["DATASET_UNMOUNT_TIMEOUT_SECONDS"] == "30"
