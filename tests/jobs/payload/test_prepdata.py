"""Text to token shards (jobs/payload/prepdata.py) with a tokenizer.json made by the `tokenizers` library: the
ids are the ones transformers' fast tokenizer gives for the same file (its peer), uint16 or uint32 by the
vocabulary, cut at --shard-tokens, meta.json beside them; Llama 3's 128,256-token vocabulary trains; bad
input names every problem at once."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import transformers

from ..jobs_util import PY, SRC, base_env
from ..tokenizer_util import LLAMA3_VOCAB, word_tokenizer


def run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, str(SRC / script), *args], env=base_env(), capture_output=True, text=True, timeout=300
    )


def texts(folder, vocab: int, docs: int = 3, words: int = 40) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    out = []
    for d in range(docs):
        text = " ".join(f"w{i}" for i in rng.integers(4, vocab, size=words)) + "\n"
        (folder / f"doc{d}.txt").write_text(text)
        out.append(text)
    return out


def test_the_shards_hold_transformers_ids_for_each_document_then_eos(tmp_path):
    word_tokenizer(tmp_path / "model", 1000)
    docs = texts(tmp_path / "text", 1000)
    p = run(
        "prepdata.py", "--tokenizer", str(tmp_path / "model"), "--input", str(tmp_path / "text"),
        "--out", str(tmp_path / "data"), "--append-eos", "<eos>", "--shard-tokens", "50",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    peer = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tmp_path / "model" / "tokenizer.json"))
    expected = [i for d in docs for i in [*peer(d)["input_ids"], 2]]
    assert expected[0] == 1 and len(expected) == 3 * 42  # <bos> from the post-processor, 40 words, <eos>
    files = sorted((tmp_path / "data").glob("*.bin"))
    assert [f.name for f in files] == ["train_00000.bin", "train_00001.bin", "train_00002.bin"]
    got = [np.fromfile(f, dtype=np.uint16) for f in files]
    assert [len(g) for g in got] == [50, 50, 26]
    assert np.concatenate(got).tolist() == expected
    meta = json.loads((tmp_path / "data" / "meta.json").read_text())
    assert meta == {
        "format": "azml-gpu-tokens/1",
        "dtype": "uint16",
        "vocab_size": 1000,
        "tokenizer": str(tmp_path / "model"),
    }
    out = tmp_path / "data"
    assert (
        p.stdout
        == f"wrote 126 tokens from 3 files to {out}: 3 shard(s) of uint16 (vocabulary 1000), meta.json\n"
    )


def test_llama3_sized_text_is_uint32_and_trains(tmp_path):
    tokenizer = word_tokenizer(tmp_path / "model", LLAMA3_VOCAB)
    texts(tmp_path / "text", LLAMA3_VOCAB, docs=2, words=200)
    p = run(
        "prepdata.py",
        "--tokenizer",
        str(tokenizer),
        "--input",
        str(tmp_path / "text"),
        "--out",
        str(tmp_path / "data"),
    )
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "data" / "meta.json").read_text())["dtype"] == "uint32"
    ids = np.fromfile(tmp_path / "data" / "train_00000.bin", dtype=np.uint32)
    assert len(ids) == 402 and ids.max() > 65535
    t = run("train.py", "--data", str(tmp_path / "data"), "--steps", "2", "--block-size", "16",
            "--n-embd", "32",
            "--n-layer", "1", "--vocab-size", str(LLAMA3_VOCAB))  # fmt: skip
    assert t.returncode == 0, t.stderr
    assert "final parameters sha256" in t.stdout
    small = run("train.py", "--data", str(tmp_path / "data"), "--steps", "1", "--vocab-size", "65536")
    assert (
        small.returncode == 2
        and "set --vocab-size 128256" in small.stderr
        and "Traceback" not in small.stderr
    )


def test_every_problem_is_named_at_once(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "old.bin").write_bytes(b"")
    (tmp_path / "empty").mkdir()
    p = run(
        "prepdata.py", "--tokenizer", str(tmp_path), "--input", str(tmp_path / "nope"),
        str(tmp_path / "empty"), "--out", str(tmp_path / "data"), "--shard-tokens", "0",
    )  # fmt: skip
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr == (
        f"prepare-data: error: --tokenizer {tmp_path}: no tokenizer.json there; pass the model folder that "
        "holds it (a Hugging Face folder's fast tokenizer); "
        f"--input {tmp_path / 'nope'}: no such file or folder; --input {tmp_path / 'empty'}: the folder "
        f"holds no files; --out {tmp_path / 'data'}: already holds token shards; pass a new or empty folder; "
        "--shard-tokens must be at least 1 (got 0)\n"
    )
    word_tokenizer(tmp_path / "model", 100)
    texts(tmp_path / "text", 100, docs=1)
    p = run("prepdata.py", "--tokenizer", str(tmp_path / "model"), "--input", str(tmp_path / "text"),
            "--out", str(tmp_path / "new"), "--append-eos", "<|end_of_text|>")  # fmt: skip
    assert p.returncode == 2
    assert p.stderr == "prepare-data: error: --append-eos '<|end_of_text|>': not a token of the tokenizer\n"


def test_without_the_tokenizers_library_it_exits_2_saying_what_to_install(tmp_path):
    """An environment without `tokenizers` (a job's image may lack it): a message, not an ImportError."""
    word_tokenizer(tmp_path / "tok", 300)
    (tmp_path / "in.txt").write_text("w4 w5")
    # `python prepdata.py ...` with `import tokenizers` failing (None in sys.modules raises ImportError)
    blocked = "import os, sys, runpy; sys.modules['tokenizers'] = None; sys.argv = sys.argv[1:]; "
    blocked += (
        "sys.path.insert(0, os.path.dirname(sys.argv[0])); runpy.run_path(sys.argv[0], run_name='__main__')"
    )
    argv = [
        "--tokenizer",
        str(tmp_path / "tok"),
        "--input",
        str(tmp_path / "in.txt"),
        "--out",
        str(tmp_path / "o"),
    ]
    p = subprocess.run(
        [PY, "-c", blocked, str(SRC / "prepdata.py"), *argv],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert "`tokenizers` library is not installed" in p.stderr and "--environment" in p.stderr
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "o").exists()
