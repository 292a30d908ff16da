"""`--init-from` a Hugging Face folder on 2 FSDP ranks (gloo on CPU, `python -m jobs local`): each rank loads
its shards of the folder written from Meta's reference weights (tests/jobs/llama_reference.py); with --lr 0
the weights after a step are exactly the file's. The single-process loading is tested in
tests/jobs/src/test_hfweights.py."""

from __future__ import annotations

import train

from tests.jobs.llama_reference import loaded, meta_weights, write_hf_folder

from .jobscripts_util import LocalRun, fingerprint


def test_fsdp_ranks_start_from_the_hf_weights(tmp_path):
    """2 FSDP ranks load their shards of the folder; with --lr 0 the weights after a step are exactly the
    file's, the fingerprint an in-process load gives."""
    write_hf_folder(tmp_path / "hf", meta_weights())
    expected = train.fingerprint(loaded(tmp_path / "hf"))
    args = [
        "--parallel",
        "fsdp",
        "--init-from",
        str(tmp_path / "hf"),
        "--steps",
        "1",
        "--lr",
        "0",
        "--block-size",
        "16",
    ]
    rc, out, err = LocalRun(args, procs=2, logs=tmp_path / "logs").finish()
    assert rc == 0, out + err
    assert f"initialised from {tmp_path / 'hf'}" in out
    assert fingerprint(out) == expected
