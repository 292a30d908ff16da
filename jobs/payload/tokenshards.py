"""Token shards: the `*.bin` files of a --data folder and the `meta.json` beside them that says their dtype.

A shard is a flat array of token ids with no header, nanoGPT's train.bin format (karpathy/nanoGPT
data/openwebtext/prepare.py: `np.memmap(..., dtype=np.uint16)`). nanoGPT keeps its one fact beyond the ids
in a side file (data/shakespeare_char/prepare.py writes `meta.pkl` with `vocab_size`); here that file is
`meta.json`, JSON so any tool can read it:

    {"format": "azml-gpu-tokens/1", "dtype": "uint32", "vocab_size": 128256, "tokenizer": "<what made it>"}

- `dtype`: "uint16" or "uint32", little-endian, the same for every shard of the folder. prepdata.py writes
  uint32 whenever the vocabulary exceeds 65,535 ids (Llama 3's 128,256) and uint16 otherwise.
- `vocab_size`: the tokenizer's vocabulary (added tokens included); the model's --vocab-size must be at
  least this.
- A folder without meta.json is read as uint16 (nanoGPT's GPT-2 shards, and this trainer's before it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

META = "meta.json"
FORMAT = "azml-gpu-tokens/1"
DTYPES = {"uint16": np.uint16, "uint32": np.uint32}
UINT16_MAX_VOCAB = 65_535  # above this many ids, uint32


def dtype_for(vocab_size: int) -> str:
    """The shard dtype for a vocabulary: uint32 whenever it exceeds 65,535 ids."""
    return "uint32" if vocab_size > UINT16_MAX_VOCAB else "uint16"


def write_meta(folder: Path, dtype: str, vocab_size: int, tokenizer: str) -> None:
    record = {"format": FORMAT, "dtype": dtype, "vocab_size": vocab_size, "tokenizer": tokenizer}
    (folder / META).write_text(json.dumps(record, indent=2) + "\n")


def read_meta(folder: Path, problems: list[str]) -> dict[str, Any]:
    """The folder's meta.json ({"dtype": "uint16"} without one); what is wrong with it goes to `problems`."""
    path = folder / META
    if not path.exists():
        return {"dtype": "uint16"}
    try:
        meta = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        problems.append(f"--data {folder}: {META} is not JSON ({e})")
        return {"dtype": "uint16"}
    if not isinstance(meta, dict):
        problems.append(f"--data {folder}: {META} is not a JSON object")
        return {"dtype": "uint16"}
    if meta.get("dtype") not in DTYPES:
        problems.append(
            f"--data {folder}: {META} dtype {meta.get('dtype')!r} is not one of {', '.join(DTYPES)}"
        )
        meta = {**meta, "dtype": "uint16"}
    vocab = meta.get("vocab_size")
    if vocab is not None and (not isinstance(vocab, int) or isinstance(vocab, bool) or vocab < 1):
        problems.append(f"--data {folder}: {META} vocab_size {vocab!r} is not a positive integer")
        meta = {k: v for k, v in meta.items() if k != "vocab_size"}
    elif vocab is not None and meta["dtype"] == "uint16" and vocab > UINT16_MAX_VOCAB + 1:
        problems.append(
            f"--data {folder}: {META} says dtype uint16 for a vocabulary of {vocab}: ids above 65,535 do "
            "not fit; write the shards as uint32 (prepdata.py does)"
        )
    return meta


def check_shards(data: str, block_size: int, vocab_size: int) -> list[str]:
    """Every reason the --data folder cannot feed this model (--block-size, --vocab-size), or []."""
    folder = Path(data)
    shards = sorted(folder.glob("*.bin")) if folder.is_dir() else []
    if not shards:
        return [
            f"--data {data}: no *.bin token shards there; pass a folder of token shards "
            "(prepdata.py writes them) or leave --data out for synthetic tokens"
        ]
    problems: list[str] = []
    meta = read_meta(folder, problems)
    itemsize = np.dtype(DTYPES[meta["dtype"]]).itemsize
    if meta.get("vocab_size", 0) > vocab_size:
        problems.append(
            f"--vocab-size {vocab_size} is smaller than the vocabulary of the tokenizer that wrote --data "
            f"{data} ({meta['vocab_size']}, {META}): set --vocab-size {meta['vocab_size']} (or start from "
            "that tokenizer's model with --init-from)"
        )
    odd = [s.name for s in shards if s.stat().st_size % itemsize]
    if odd:
        problems.append(
            f"--data: shards {odd} are not a whole number of {meta['dtype']} ids; is {META}'s dtype right?"
        )
    short = [s.name for s in shards if s.stat().st_size // itemsize < block_size + 2]
    if short:
        problems.append(f"--data: shards {short} hold fewer than --block-size + 2 ({block_size + 2}) tokens")
    return problems


def open_shards(data: str) -> tuple[list[np.ndarray], list[str]]:
    """The folder's shards as read-only memmaps of their dtype (check_shards first), and their paths."""
    folder = Path(data)
    dtype = DTYPES[read_meta(folder, [])["dtype"]]
    paths = sorted(folder.glob("*.bin"))
    return [np.memmap(p, dtype=dtype, mode="r") for p in paths], [str(p) for p in paths]
