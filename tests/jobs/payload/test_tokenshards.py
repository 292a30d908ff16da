"""Token shards carry their dtype (jobs/payload/tokenshards.py): meta.json says uint16 or uint32, a folder
without one is nanoGPT's uint16, and what cannot feed the model is named, every problem at once."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tokenshards
from train import Tokens


def shards(folder, dtype, ids, meta: dict | None = None):
    folder.mkdir(parents=True, exist_ok=True)
    np.asarray(ids, dtype=dtype).tofile(folder / "a.bin")
    if meta is not None:
        (folder / "meta.json").write_text(json.dumps(meta))
    return str(folder)


@pytest.mark.parametrize(
    ("vocab", "dtype"), [(50257, "uint16"), (65535, "uint16"), (65536, "uint32"), (128256, "uint32")]
)
def test_the_dtype_is_uint32_whenever_the_vocabulary_exceeds_65535(vocab, dtype):
    assert tokenshards.dtype_for(vocab) == dtype


def test_uint32_shards_with_ids_above_65535_are_read_as_written(tmp_path):
    ids = np.arange(100, dtype=np.int64) * 1281 + 70000  # 70,000 .. 196,819 > uint16
    ids %= 128256
    data = shards(
        tmp_path / "d",
        np.uint32,
        ids,
        {"format": tokenshards.FORMAT, "dtype": "uint32", "vocab_size": 128256},
    )
    assert tokenshards.check_shards(data, 16, 128256) == []
    t = Tokens(data, 128256, 16, seed=1)
    x, y = t.batch(0, 0, 0, 4)
    assert x.max() > 65535
    row = x[0].numpy()
    start = int(np.flatnonzero(ids == row[0])[0])
    assert (row == ids[start : start + 16]).all()


def test_a_folder_without_meta_json_is_uint16(tmp_path):
    data = shards(tmp_path / "d", np.uint16, np.arange(50))
    assert tokenshards.check_shards(data, 16, 64) == []
    x, _ = Tokens(data, 64, 16, seed=1).batch(0, 0, 0, 2)
    assert x.max() < 50 and (np.diff(x[0].numpy()) == 1).all()


def test_out_of_vocabulary_ids_are_reported_for_uint32_too(tmp_path):
    data = shards(tmp_path / "d", np.uint32, np.full(64, 100_000), {"dtype": "uint32"})
    with pytest.raises(SystemExit, match=r"token id 100000 in .*a\.bin is >= --vocab-size 512"):
        Tokens(data, 512, 16, seed=1).batch(0, 0, 0, 2)


def test_every_problem_is_named_at_once(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    np.zeros(9, dtype=np.uint8).tofile(folder / "odd.bin")  # 9 bytes: not whole uint32s, and short
    (folder / "meta.json").write_text(json.dumps({"dtype": "uint32", "vocab_size": 128256}))
    assert tokenshards.check_shards(str(folder), 16, 512) == [
        "--vocab-size 512 is smaller than the vocabulary of the tokenizer that wrote --data "
        f"{folder} (128256, meta.json): set --vocab-size 128256 (or start from that tokenizer's model with "
        "--init-from)",
        "--data: shards ['odd.bin'] are not a whole number of uint32 ids; is meta.json's dtype right?",
        "--data: shards ['odd.bin'] hold fewer than --block-size + 2 (18) tokens",
    ]


@pytest.mark.parametrize(
    ("meta", "needle"),
    [
        ({"dtype": "int8"}, "meta.json dtype 'int8' is not one of uint16, uint32"),
        ({"dtype": "uint16", "vocab_size": 128256}, "says dtype uint16 for a vocabulary of 128256"),
        ({"dtype": "uint32", "vocab_size": "big"}, "meta.json vocab_size 'big' is not a positive integer"),
        ([1], "meta.json is not a JSON object"),
    ],
)
def test_a_meta_json_that_cannot_be_right_is_refused(tmp_path, meta, needle):
    data = shards(tmp_path / "d", np.uint32, np.zeros(64), None)
    (tmp_path / "d" / "meta.json").write_text(json.dumps(meta))
    problems = tokenshards.check_shards(data, 16, 200_000)
    assert any(needle in p for p in problems), problems


def test_no_shards_names_the_fix(tmp_path):
    assert tokenshards.check_shards(str(tmp_path), 16, 512) == [
        f"--data {tmp_path}: no *.bin token shards there; pass a folder of token shards (prepdata.py writes "
        "them) or leave --data out for synthetic tokens"
    ]
