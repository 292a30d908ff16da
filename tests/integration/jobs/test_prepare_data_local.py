"""`python -m jobs submit prepare-data` against localml: a text folder and a tokenizer folder registered as
data assets (the text by label, @latest), prepdata.py run as a job over them, its shards and meta.json on the
datastore at data/RUN_NAME/, and `submit train --data` that folder for a few steps of a tiny model: the
chain from text to training."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.integration.jobs.test_azureml_examples_local import create_data, datastore
from tests.jobs.jobs_util import FIXTURES, REPO
from tests.jobs.tokenizer_util import word_tokenizer

FIXTURE = FIXTURES / "outputs-prod.json"
VOCAB = 300  # below 65,536: uint16 shards
#: words per document; each document is <bos> + its words + <eos> (--append-eos)
WORDS = (5, 7, 9)


@pytest.fixture(scope="module")
def local_azure_ml():
    from doubles.localml import LocalAzureML

    with LocalAzureML() as env:
        yield env


def submit(env, tmp_path: Path, *argv: str) -> tuple[int, dict, str]:
    split = argv.index("--") if "--" in argv else len(argv)
    cmd = [sys.executable, "-m", "jobs", "submit", *argv[:split], "--outputs", str(FIXTURE)]
    cmd += ["--logs", str(tmp_path / "logs"), "--poll-seconds", "0.5", "--json", *argv[split:]]
    p = subprocess.run(cmd, env=env.subprocess_env(), cwd=REPO, capture_output=True, text=True, timeout=300)
    return p.returncode, json.loads(p.stdout) if p.stdout.strip() else {}, p.stderr


@pytest.mark.slow
def test_prepare_data_job_writes_shards_that_train_reads(local_azure_ml, tmp_path):
    text = tmp_path / "corpus"
    text.mkdir()
    for i, n in enumerate(WORDS):
        (text / f"doc{i}.txt").write_text(" ".join(f"w{10 + i * 20 + k}" for k in range(n)))
    word_tokenizer(tmp_path / "tok", VOCAB)
    assert create_data(local_azure_ml, "corpus", "1", str(text))["version"] == "1"
    assert create_data(local_azure_ml, "tiny-tok", "1", str(tmp_path / "tok"))["version"] == "1"

    code, summary, err = submit(
        local_azure_ml,
        tmp_path,
        "prepare-data",
        "--cluster",
        "a100-lp",
        "--text",
        "azureml:corpus@latest",
        "--tokenizer",
        "azureml:tiny-tok:1",
        "--run-name",
        "corpus-tok",
        "--",
        "--append-eos",
        "<eos>",
    )
    assert code == 0, json.dumps(summary)[-2000:] + err[-3000:]
    expected = sum(1 + n + 1 for n in WORDS)  # 24 tokens
    got = summary["prepare_data"]
    assert (got["tokens"], got["files"], got["shards"], got["dtype"]) == (expected, 3, 1, "uint16")
    assert got["data"] == "azureml://datastores/workspaceblobstore/paths/data/corpus-tok/"
    folder = datastore(local_azure_ml, "data/corpus-tok")
    meta = json.loads((folder / "meta.json").read_text())
    assert (meta["dtype"], meta["vocab_size"]) == ("uint16", VOCAB)
    ids = np.fromfile(folder / "train_00000.bin", dtype=np.uint16)
    assert len(ids) == expected
    assert list(ids[:3]) == [1, 10, 11] and ids[-1] == 2  # <bos> w10 w11 ... <eos>

    # the same run name again: prepdata.py finds shards there and refuses, naming --out (exit 2 on the node)
    code, summary, _ = submit(
        local_azure_ml,
        tmp_path,
        "prepare-data",
        "--cluster",
        "a100-lp",
        "--text",
        "azureml:corpus@latest",
        "--tokenizer",
        "azureml:tiny-tok:1",
        "--run-name",
        "corpus-tok",
    )
    assert code == 1 and summary["jobs"][0]["status"] == "Failed"
    assert len(np.fromfile(folder / "train_00000.bin", dtype=np.uint16)) == expected  # untouched

    tiny = ("--n-layer", "1", "--n-head", "2", "--n-embd", "32", "--block-size", "8", "--vocab-size", "300")
    code, summary, err = submit(
        local_azure_ml,
        tmp_path,
        "train",
        "--cluster",
        "a100-lp",
        "--run-name",
        "on-corpus-tok",
        "--data",
        got["data"],
        "--steps",
        "2",
        "--batch-size",
        "1",
        "--allow-socket",
        "--",
        *tiny,
    )
    assert code == 0, json.dumps(summary)[-2000:] + err[-3000:]
    assert summary["jobs"][0]["status"] == "Completed"
