"""DATASET_UNMOUNT_TIMEOUT_SECONDS for a train job: long enough to upload one checkpoint at job end.

Azure ML gives a rw_mount output's pending operations (flushes, i.e. uploads) this many seconds at unmount,
then "terminat[es] the mount message loop forcefully"; default 30 (MicrosoftDocs/azure-ai-docs
articles/machine-learning/how-to-read-write-data-v2.md, "Available mount settings"). A train job whose last
checkpoint is still uploading when it ends (a cancel, a preemption notice) loses it if that takes longer.

    timeout = max(30, ceil(checkpoint bytes / WRITE_RATE))
    checkpoint bytes = parameters x 4 bytes (fp32 weights) + parameters x 8 bytes (AdamW exp_avg, exp_avg_sq)

WRITE_RATE is a chosen, conservative 60 MiB/s: the only per-blob throughput figure Azure's scalability
targets state is 60 MiB/s (a single page blob); a block blob's is "up to storage account ingress/egress
limits" and depends on concurrency and the sender (MicrosoftDocs/azure-docs includes/storage-blob-scale-
targets.md), and a FUSE flush uploads one file from one node. Parameters are counted for train.py's
Llama (jobs/payload/llamaconfig.py) from the model flags among the script arguments, with train.py's defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import math

from jobs.payload.llamaconfig import PRESETS, param_count

SHAPE_FIELDS = ("n_layer", "n_head", "n_kv_head", "n_embd", "ffn_hidden", "block_size", "vocab_size")

WRITE_RATE_BYTES_S = 60 * 2**20
#: Azure ML's default DATASET_UNMOUNT_TIMEOUT_SECONDS, the floor.
DEFAULT_TIMEOUT_S = 30
BYTES_PER_PARAM = 4 + 8  # fp32 weights + AdamW's two fp32 moments
ENV = "DATASET_UNMOUNT_TIMEOUT_SECONDS"


def model_params(script_args: tuple[str, ...] = ()) -> int:
    """Parameters of train.py's Llama for these script arguments: the --model preset (default tiny) with
    the shape flags given over it (jobs/payload/llamaconfig.py, the model's one definition)."""
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    p.add_argument("--model", choices=sorted(PRESETS), default="tiny")
    for f in SHAPE_FIELDS:
        p.add_argument("--" + f.replace("_", "-"), dest=f, type=int)
    a, _ = p.parse_known_args(list(script_args))
    given = {f: getattr(a, f) for f in SHAPE_FIELDS if getattr(a, f) is not None}
    return param_count(dataclasses.replace(PRESETS[a.model], **given))


def checkpoint_bytes(params: int) -> int:
    return params * BYTES_PER_PARAM


def timeout_s(nbytes: int, rate: float = WRITE_RATE_BYTES_S) -> int:
    return max(DEFAULT_TIMEOUT_S, math.ceil(nbytes / rate))


def train_env(script_args: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment variable a train job sets, as the job's environment_variables hold it."""
    return {ENV: str(timeout_s(checkpoint_bytes(model_params(script_args))))}
