"""Weights out (jobs/payload/hfexport.py): a train.py checkpoint exported to a folder that transformers'
from_pretrained loads strictly, whose weights are train.py's final weights (its `final parameters sha256`)
and whose logits are model.py's forward of them; sharded with an index above --max-shard-size, tied without
lm_head.weight; and the input it refuses, naming the flag."""

from __future__ import annotations

import json
import subprocess

import hfexport
import pytest
import torch
import train
from safetensors import safe_open

from ..hf_peer import VOCAB, from_pretrained, ours_with, save_hf
from ..jobs_util import PY, SRC, base_env

TOKENS = torch.randint(0, VOCAB, (2, 32), generator=torch.Generator().manual_seed(5))


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, str(SRC / script), *args], env=base_env(), capture_output=True, text=True, timeout=300
    )


def trained(tmp_path, *args: str) -> str:
    """Train 3 steps with a checkpoint at the end; returns train.py's final fingerprint."""
    p = run("train.py", "--steps", "3", "--ckpt", str(tmp_path / "ck"), "--sync-ckpt", *args)
    assert p.returncode == 0, p.stderr
    return train_fingerprint(p.stdout)


def train_fingerprint(out: str) -> str:
    return next(line.split()[-1] for line in out.splitlines() if line.startswith("final parameters sha256"))


def test_a_tied_llama3_run_exports_sharded_and_transformers_loads_its_exact_weights(tmp_path):
    save_hf(tmp_path / "hf", tie=True)
    digest = trained(tmp_path, "--init-from", str(tmp_path / "hf"), "--block-size", "32")
    p = run(
        "hfexport.py",
        "--ckpt",
        str(tmp_path / "ck"),
        "--out",
        str(tmp_path / "out"),
        "--max-shard-size",
        "100KB",
    )
    assert p.returncode == 0, p.stderr
    files = sorted(f.name for f in (tmp_path / "out").iterdir())
    shards = [f for f in files if f.startswith("model-")]
    assert len(shards) > 1 and "model.safetensors.index.json" in files and "model.safetensors" not in files
    index = json.loads((tmp_path / "out" / "model.safetensors.index.json").read_text())
    assert sorted(set(index["weight_map"].values())) == shards and "lm_head.weight" not in index["weight_map"]
    for name in shards:
        with safe_open(str(tmp_path / "out" / name), "pt") as f:
            assert f.metadata() == {"format": "pt"}
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["tie_word_embeddings"] is True and config["max_position_embeddings"] == 128
    assert config["rope_parameters"]["rope_type"] == "llama3"
    hf = from_pretrained(tmp_path / "out")
    assert hf.lm_head.weight.data_ptr() == hf.model.embed_tokens.weight.data_ptr()  # tied by transformers
    assert train.fingerprint(ours_with(hf, tmp_path / "out")) == digest  # train.py's final weights, exactly
    with torch.no_grad():
        torch.testing.assert_close(
            hf(TOKENS).logits, ours_with(hf, tmp_path / "out")(TOKENS), atol=2e-5, rtol=2e-5
        )


def test_an_untied_preset_run_exports_one_file_in_bfloat16(tmp_path):
    digest = trained(tmp_path, "--vocab-size", str(VOCAB))
    p = run("hfexport.py", "--ckpt", str(tmp_path / "ck"), "--step", "3", "--out", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    assert sorted(f.name for f in (tmp_path / "out").iterdir()) == ["config.json", "model.safetensors"]
    p32 = run("hfexport.py", "--ckpt", str(tmp_path / "ck"), "--out", str(tmp_path / "o32"))
    assert p32.returncode == 0, p32.stderr
    hf32 = from_pretrained(tmp_path / "o32")
    assert train.fingerprint(ours_with(hf32, tmp_path / "o32")) == digest
    p = run(
        "hfexport.py", "--ckpt", str(tmp_path / "ck"), "--out", str(tmp_path / "bf"), "--dtype", "bfloat16"
    )
    assert p.returncode == 0, p.stderr
    with safe_open(str(tmp_path / "bf" / "model.safetensors"), "pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.bfloat16}  # noqa: SIM118  (not a dict)
    hfbf = from_pretrained(tmp_path / "bf")
    for (name, a), (_, b) in zip(hf32.state_dict().items(), hfbf.state_dict().items(), strict=True):
        assert torch.equal(a.to(torch.bfloat16).float(), b), name


def test_the_input_it_refuses_names_the_flag(tmp_path):
    trained(tmp_path, "--vocab-size", "64", "--n-layer", "1")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    (tmp_path / "ck" / "step_00000002").mkdir()  # a save that never committed
    ck = str(tmp_path / "ck")
    cases = [
        (["--ckpt", str(tmp_path / "nope"), "--out", "o"], f"--ckpt {tmp_path / 'nope'}: no such folder"),
        (
            ["--ckpt", ck, "--step", "7", "--out", "o"],
            f"--step 7: no step_00000007 in --ckpt {ck} (committed steps: 3)",
        ),
        (
            ["--ckpt", ck, "--step", "2", "--out", "o"],
            f"--step 2: {ck}/step_00000002 is not a complete checkpoint: no commit.json marker",
        ),
        (["--ckpt", ck, "--out", str(tmp_path / "full")], f"--out {tmp_path / 'full'}: is not empty"),
        (["--ckpt", ck, "--out", "o", "--max-shard-size", "lots"], "--max-shard-size 'lots': pass a size"),
        (["--ckpt", ck, "--step", "0", "--out", "o"], "--step 0: must be at least 1"),
    ]
    for args, needle in cases:
        p = run("hfexport.py", *args)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert p.stderr.startswith("export-hf: error: ") and needle in p.stderr, p.stderr


@pytest.mark.parametrize(
    ("text", "size"),
    [("5GB", 5 * 10**9), ("2GiB", 2 * 2**30), ("100KB", 100_000), ("123", 123), ("1.5MB", 1_500_000)],
)
def test_shard_sizes_read_as_transformers_writes_them(text, size):
    assert hfexport.parse_size(text) == size


def test_shards_keep_name_order_and_a_large_tensor_gets_its_own_file():
    t = {n: torch.zeros(s) for n, s in (("a", 10), ("b", 10), ("c", 100), ("d", 5))}
    assert [sorted(f) for f in hfexport.shard(t, 79)] == [["a"], ["b"], ["c"], ["d"]]
    assert [sorted(f) for f in hfexport.shard(t, 80)] == [["a", "b"], ["c"], ["d"]]
    assert [sorted(f) for f in hfexport.shard(t, 1000)] == [["a", "b", "c", "d"]]
    assert [sorted(f) for f in hfexport.shard(t, 400)] == [["a", "b"], ["c"], ["d"]]


def test_tokenizer_from_copies_the_tokenizer_files_and_refuses_a_folder_without_one(tmp_path):
    from ..tokenizer_util import word_tokenizer

    trained(tmp_path, "--vocab-size", "64", "--n-layer", "1")
    word_tokenizer(tmp_path / "hf", 64)
    (tmp_path / "hf" / "tokenizer_config.json").write_text('{"model_max_length": 64}')
    args = ["--ckpt", str(tmp_path / "ck"), "--tokenizer-from"]
    p = run("hfexport.py", *args, str(tmp_path / "hf"), "--out", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr
    for name in ("tokenizer.json", "tokenizer_config.json"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "hf" / name).read_bytes()
    assert not (tmp_path / "out" / "special_tokens_map.json").exists()
    assert p.stdout.endswith("model.safetensors, tokenizer.json, tokenizer_config.json\n")
    p = run("hfexport.py", *args, str(tmp_path), "--out", str(tmp_path / "o2"))
    assert p.returncode == 2 and f"--tokenizer-from {tmp_path}: no tokenizer.json there" in p.stderr
    assert not (tmp_path / "o2").exists()  # refused before anything is written
