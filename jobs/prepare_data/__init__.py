"""`python -m jobs prepare-data --tokenizer HF_DIR --input TEXT... --out DATA_DIR [--append-eos TOKEN]
[--shard-tokens N]`: text files to train.py's token shards (uint32 above 65,535 ids, meta.json beside them)
with the model folder's tokenizer.json. Runs jobs/payload/prepdata.py as its own process, as `jobs local` runs
the job scripts. Exit 0, or 2 on bad input."""

from __future__ import annotations

import argparse
import subprocess
import sys

from jobs.builders import SRC_DIR as SRC  # the payload folder, one home


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.payload.prepdata import add_args

    p = subparsers.add_parser(
        "prepare-data",
        help="text files to token shards for train.py --data, with a model's tokenizer.json",
        description=__doc__,
        allow_abbrev=False,
    )
    add_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from jobs.payload.prepdata import script_args

    cmd = [sys.executable, str(SRC / "prepdata.py"), *script_args(args)]
    return subprocess.run(cmd, check=False).returncode
