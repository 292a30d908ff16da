"""`--init-from` a Hugging Face folder on 2 FSDP ranks (gloo on CPU, `python -m jobs local`): each rank loads
its shards of the folder written from Meta's reference weights (tests/jobs/llama_reference.py); with --lr 0
the weights after a step are exactly the file's. The single-process loading is tested in
tests/jobs/payload/test_hfweights.py."""

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


def test_fsdp_ranks_train_a_tied_transformers_folder_and_its_checkpoint_exports(tmp_path):
    """A tied model (Llama 3.2 1B/3B's layout: no lm_head.weight in the files) written by transformers 5
    (RoPE under rope_parameters) loads on 2 FSDP ranks and trains; the 2-rank checkpoint exports to a folder
    transformers loads strictly, holding exactly the weights train.py ended with."""
    import hfexport

    from tests.jobs.hf_peer import from_pretrained, ours_with, save_hf

    save_hf(tmp_path / "hf", tie=True)
    args = ["--parallel", "fsdp", "--init-from", str(tmp_path / "hf"), "--steps", "2", "--block-size", "16"]
    args += ["--ckpt", str(tmp_path / "ck"), "--sync-ckpt"]
    rc, out, err = LocalRun(args, procs=2, logs=tmp_path / "logs").finish()
    assert rc == 0, out + err
    assert hfexport.main(["--ckpt", str(tmp_path / "ck"), "--out", str(tmp_path / "out")]) == 0
    hf = from_pretrained(tmp_path / "out")
    assert train.fingerprint(ours_with(hf, tmp_path / "out")) == fingerprint(out)


def test_two_ranks_given_config_json_instead_of_its_folder_say_it_once_without_a_traceback(tmp_path):
    from tests.jobs.hf_peer import save_hf

    save_hf(tmp_path / "hf", tie=True)
    args = ["--parallel", "fsdp", "--init-from", str(tmp_path / "hf" / "config.json"), "--steps", "1"]
    rc, out, err = LocalRun(args, procs=2, logs=tmp_path / "logs").finish()
    assert rc == 2, out + err
    logs = [(tmp_path / "logs" / "user_logs" / f"std_log_process_{r}.txt").read_text() for r in (0, 1)]
    message = (
        f"train.py: error: --init-from {tmp_path / 'hf' / 'config.json'}: is a file; pass the model folder"
    )
    assert message in logs[0] and message not in logs[1]
    assert all("Traceback" not in log for log in logs) and "Traceback" not in out + err
