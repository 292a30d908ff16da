"""`python -m jobs export-hf --ckpt DIR [--step N] --out HF_DIR [--dtype float32|bfloat16] [--max-shard-size
5GB]`: a train.py checkpoint (any world size) to a Hugging Face folder that transformers' from_pretrained
loads. Runs jobs/payload/hfexport.py (torch) as its own process, as `jobs local` runs the job scripts. Exit 0,
or 2 on bad input."""

from __future__ import annotations

import argparse
import subprocess
import sys

from jobs.builders import SRC_DIR as SRC  # the payload folder, one home


def register(subparsers: argparse._SubParsersAction) -> None:
    from jobs.payload.hfexport import add_args

    p = subparsers.add_parser(
        "export-hf",
        help="a training checkpoint to a Hugging Face Llama folder (config.json, safetensors)",
        description=__doc__,
        allow_abbrev=False,
    )
    add_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from jobs.payload.hfexport import script_args

    return subprocess.run(
        [sys.executable, str(SRC / "hfexport.py"), *script_args(args)], check=False
    ).returncode
