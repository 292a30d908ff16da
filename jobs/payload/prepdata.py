"""Text files to token shards for train.py --data, with a model folder's own tokenizer.

    python prepdata.py --tokenizer HF_DIR --input TEXT_FILE_OR_FOLDER [...] --out DATA_DIR \\
        [--append-eos "<|end_of_text|>"] [--shard-tokens 100000000]
    python -m jobs prepare-data ...                                  # the same, from the jobs CLI

The tokenizer is the folder's tokenizer.json (or that file itself), read by Hugging Face's `tokenizers`
library (`Tokenizer.from_file`), the file transformers' fast tokenizers load: its normalizer,
pre-tokenizer, model and post-processor, so Llama 3's <|begin_of_text|> starts every document as its
post-processor adds it. Each input file is one document (a folder: every file under it, in name order);
`--append-eos TOKEN` ends each with that token (nanoGPT's prepare.py appends GPT-2's <|endoftext|>).
The ids are concatenated into `train_00000.bin`, `train_00001.bin`, ... of at most --shard-tokens each,
uint32 whenever the vocabulary exceeds 65,535 ids and uint16 otherwise, with `meta.json` beside them
(tokenshards.py). A file is read whole: split a very large corpus into files.
Bad input (no tokenizer.json, no input file, an --out that already holds shards, an unknown EOS token)
exits 2 naming every problem at once.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

EXIT_USAGE = 2


def add_args(p: argparse.ArgumentParser) -> None:
    """The flags, shared with `python -m jobs prepare-data` (jobs/prepare_data/)."""
    p.add_argument("--tokenizer", required=True, help="model folder with tokenizer.json (or the file)")
    p.add_argument("--input", required=True, nargs="+", help="text files or folders of them")
    p.add_argument("--out", required=True, help="the --data folder to write (no *.bin there yet)")
    p.add_argument("--append-eos", metavar="TOKEN", help="a token to end each document with")
    p.add_argument("--shard-tokens", type=int, default=100_000_000, help="tokens per shard at most")


def script_args(args: argparse.Namespace) -> list[str]:
    """The command line of this script for parsed flags (the jobs CLI runs it as its own process)."""
    out = ["--tokenizer", args.tokenizer, "--input", *args.input, "--out", args.out]
    out += ["--shard-tokens", str(args.shard_tokens)]
    return out + ([] if args.append_eos is None else ["--append-eos", args.append_eos])


def inputs(paths: list[str], problems: list[str]) -> list[Path]:
    files: list[Path] = []
    for text in paths:
        p = Path(text)
        if p.is_file():
            files.append(p)
        elif p.is_dir():
            found = sorted(f for f in p.rglob("*") if f.is_file())
            if not found:
                problems.append(f"--input {text}: the folder holds no files")
            files += found
        else:
            problems.append(f"--input {text}: no such file or folder")
    return files


def load_tokenizer(where: str, problems: list[str]) -> Any:  # tokenizers.Tokenizer, or None
    try:
        from tokenizers import Tokenizer
    except ImportError:
        problems.append(
            "the `tokenizers` library is not installed here: `pip install tokenizers`; for a prepare-data "
            'job, pass --environment with an environment that has it (docs/job-scripts.md "Data preparation")'
        )
        return None

    p = Path(where)
    path = p / "tokenizer.json" if p.is_dir() else p
    if not path.is_file():
        problems.append(
            f"--tokenizer {where}: no tokenizer.json there; pass the model folder that holds it (a "
            "Hugging Face folder's fast tokenizer)"
        )
        return None
    try:
        return Tokenizer.from_file(str(path))
    except Exception as e:  # noqa: BLE001  the library's own message names what it could not parse
        problems.append(f"--tokenizer {where}: {path.name} is not a tokenizers file ({str(e)[:200]})")
        return None


def prepare(args: argparse.Namespace) -> int:
    import numpy as np
    from tokenshards import DTYPES, META, dtype_for, write_meta

    problems: list[str] = []
    tok = load_tokenizer(args.tokenizer, problems)
    files = inputs(args.input, problems)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        problems.append(f"--out {out}: is a file; pass a folder (created if missing)")
    elif out.is_dir() and (sorted(out.glob("*.bin")) or (out / META).exists()):
        problems.append(f"--out {out}: already holds token shards; pass a new or empty folder")
    if args.shard_tokens < 1:
        problems.append(f"--shard-tokens must be at least 1 (got {args.shard_tokens})")
    eos = None
    if tok is not None and args.append_eos is not None:
        eos = tok.token_to_id(args.append_eos)
        if eos is None:
            problems.append(f"--append-eos {args.append_eos!r}: not a token of the tokenizer")
    if problems:
        print("prepare-data: error: " + "; ".join(problems), file=sys.stderr, flush=True)
        return EXIT_USAGE
    vocab = tok.get_vocab_size(with_added_tokens=True)
    dtype = dtype_for(vocab)
    out.mkdir(parents=True, exist_ok=True)
    buf: list[np.ndarray] = []
    held = n_shards = total = 0

    def flush(force: bool) -> None:
        nonlocal buf, held, n_shards
        ids = np.concatenate(buf) if buf else np.zeros(0, dtype=DTYPES[dtype])
        while len(ids) >= args.shard_tokens or (force and len(ids)):
            ids[: args.shard_tokens].tofile(out / f"train_{n_shards:05d}.bin")
            ids, n_shards = ids[args.shard_tokens :], n_shards + 1
        buf, held = [ids], len(ids)

    for f in files:
        ids = tok.encode(f.read_text(encoding="utf-8", errors="replace")).ids
        if eos is not None:
            ids.append(eos)
        arr = np.asarray(ids, dtype=np.int64)
        if len(arr) and (arr.max() >= vocab or arr.min() < 0):  # a tokenizer whose ids exceed its vocabulary
            raise SystemExit(f"prepare-data: error: {f}: token id {int(arr.max())} >= vocabulary {vocab}")
        buf.append(arr.astype(DTYPES[dtype]))
        held, total = held + len(arr), total + len(arr)
        if held >= args.shard_tokens:
            flush(False)
    flush(True)
    write_meta(out, dtype, vocab, str(args.tokenizer))
    print(
        f"wrote {total} tokens from {len(files)} files to {out}: {n_shards} shard(s) of {dtype} "
        f"(vocabulary {vocab}), {META}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="prepare-data", description=__doc__.split("\n")[0], allow_abbrev=False)
    add_args(p)
    return prepare(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
