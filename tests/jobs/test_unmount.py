"""DATASET_UNMOUNT_TIMEOUT_SECONDS of a train job: from the checkpoint size at 60 MiB/s, never under 30 s."""

from __future__ import annotations

import sys

import pytest
import yaml

from jobs import unmount
from jobs.cli import main

from .jobs_util import FIXTURES, SRC

FIXTURE = str(FIXTURES / "outputs-prod.json")


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--n-layer", "3", "--n-embd", "96", "--vocab-size", "1000", "--block-size", "32", "--n-head", "4"),
        ("--model", "small", "--n-layer", "2", "--n-kv-head", "12"),
    ],
)
def test_parameter_count_is_the_models(args):
    """The count the timeout uses is what train.py's model has, with train.py's own defaults."""
    sys.path.insert(0, str(SRC))
    import train
    from model import Llama

    a = train.parse_args(list(args))
    model = Llama(train.model_config(a, None, None))
    assert unmount.model_params(args) == sum(p.numel() for p in model.parameters())


def test_timeout_is_checkpoint_bytes_over_the_write_rate_with_a_30_s_floor():
    assert unmount.timeout_s(0) == 30 and unmount.timeout_s(30 * 60 * 2**20) == 30
    assert unmount.timeout_s(30 * 60 * 2**20 + 1) == 31
    # Llama 3.1 8B: 8,030,261,248 parameters (the meta-llama/Llama-3.1-8B model card's "8.03B"; its bf16
    # safetensors total_size is 16,060,522,496 bytes), 12 bytes each checkpointed, at 60 MiB/s.
    big = ("--model", "8B")
    params = unmount.model_params(big)
    assert params == 16_060_522_496 // 2
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
        "--model",
        "8B",
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
