"""A train.py checkpoint to a Hugging Face Llama folder that transformers' `from_pretrained` loads strictly.

    python hfexport.py --ckpt DIR [--step N] --out HF_DIR [--dtype float32|bfloat16] [--max-shard-size 5GB]
        [--tokenizer-from HF_DIR]
    python -m jobs export-hf --ckpt DIR --step N --out HF_DIR            # the same, from the jobs CLI

Reads the committed step folder `DIR/step_0000000N/` (checkpointing.py; the newest committed one without
--step) written by any world size, DDP or FSDP: DCP's own reader reassembles the full tensors in one
process (torch/distributed/checkpoint `dcp.load(..., no_dist=True)`, the way `dcp_to_torch_save` does),
into model.py's Llama built from the commit record's config. Writes, as transformers' save_pretrained does
(src/transformers/modeling_utils.py, `save_pretrained`; utils/hub.py `get_checkpoint_shard_files`):
- config.json: transformers 5's keys (hfconfig.py `hf_config`, RoPE under `rope_parameters`);
- model.safetensors, or above --max-shard-size the shards model-0000i-of-0000n.safetensors plus
  model.safetensors.index.json (`{"metadata": {"total_size"}, "weight_map": {tensor: file}}`), every file
  with the metadata {"format": "pt"};
- a tied model (tie_embeddings) without lm_head.weight: transformers ties it to model.embed_tokens.weight
  (LlamaForCausalLM._tied_weights_keys, models/llama/modeling_llama.py).
The tensor names need no mapping: model.py names its parameters as LlamaForCausalLM does. --tokenizer-from
copies the tokenizer files (tokenizer.json, tokenizer_config.json, special_tokens_map.json,
generation_config.json, those there) of the folder the run started from, so the folder is complete.
Bad input (no such checkpoint or step, an uncommitted step, an --out that is not empty) exits 2 with one
message naming the flag.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

EXIT_USAGE = 2
DTYPES = ("float32", "bfloat16")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B|B)?\s*$", re.IGNORECASE)
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}


class ExportError(Exception):
    """Input the user can fix; the message names the flag."""


def parse_size(text: str) -> int:
    """Bytes of "5GB", "500MB", "2GiB" or a plain number of bytes (transformers' max_shard_size units)."""
    m = _SIZE.match(text)
    if not m or float(m.group(1)) <= 0:
        raise ExportError(f"--max-shard-size {text!r}: pass a size such as 5GB, 500MB or 2GiB")
    return int(float(m.group(1)) * _UNITS[(m.group(2) or "B").lower()])


def add_args(p: argparse.ArgumentParser) -> None:
    """The flags, shared with `python -m jobs export-hf` (jobs/export_hf.py)."""
    p.add_argument("--ckpt", required=True, help="train.py's --ckpt folder (step_NNNNNNNN/ inside)")
    p.add_argument("--step", type=int, help="the committed step to export (default: the newest)")
    p.add_argument("--out", required=True, help="the Hugging Face folder to write (new or empty)")
    p.add_argument("--dtype", choices=DTYPES, default="float32", help="tensor dtype in the files")
    p.add_argument("--max-shard-size", default="5GB", help="shard above this size (default 5GB)")
    p.add_argument(
        "--tokenizer-from", metavar="HF_DIR", help="copy this folder's tokenizer files beside them"
    )


def script_args(args: argparse.Namespace) -> list[str]:
    """The command line of this script for parsed flags (the jobs CLI runs it as its own process)."""
    out = [
        "--ckpt",
        args.ckpt,
        "--out",
        args.out,
        "--dtype",
        args.dtype,
        "--max-shard-size",
        args.max_shard_size,
    ]
    out += [] if args.tokenizer_from is None else ["--tokenizer-from", args.tokenizer_from]
    return out + ([] if args.step is None else ["--step", str(args.step)])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="export-hf", description=__doc__.split("\n")[0], allow_abbrev=False)
    add_args(p)
    return p.parse_args(argv)


def step_folder(ckpt: Path, step: int | None) -> Path:
    """The committed step folder to read, or ExportError naming --ckpt/--step and what there is."""
    from checkpointing import list_steps, step_name, verify

    if not ckpt.is_dir():
        raise ExportError(f"--ckpt {ckpt}: no such folder; pass train.py's --ckpt folder")
    committed = [s for s, folder in list_steps(ckpt) if verify(folder) is None]
    if step is None:
        if not committed:
            raise ExportError(
                f"--ckpt {ckpt}: holds no committed checkpoint (step_NNNNNNNN/ with commit.json)"
            )
        step = committed[0]
    folder = ckpt / step_name(step)
    if not folder.is_dir():
        have = ", ".join(str(s) for s in sorted(committed)) or "none"
        raise ExportError(f"--step {step}: no {folder.name} in --ckpt {ckpt} (committed steps: {have})")
    if (why := verify(folder)) is not None:
        raise ExportError(f"--step {step}: {folder} is not a complete checkpoint: {why}")
    return folder


#: What transformers' tokenizer and generation loaders read from a model folder, copied by --tokenizer-from.
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "generation_config.json",
)


def tokenizer_files(folder: str | None) -> list[Path]:
    """The files --tokenizer-from copies (tokenizer.json at least), or ExportError."""
    if folder is None:
        return []
    found = [Path(folder) / n for n in TOKENIZER_FILES if (Path(folder) / n).is_file()]
    if not (Path(folder) / "tokenizer.json").is_file():
        raise ExportError(
            f"--tokenizer-from {folder}: no tokenizer.json there; pass the model folder trained from"
        )
    return found


def check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out {out}: is a file; pass a folder (created if missing)")
    if out.is_dir() and any(out.iterdir()):
        raise ExportError(f"--out {out}: is not empty; pass a new or empty folder")


def shard(tensors: dict, max_bytes: int) -> list[dict]:
    """Tensors in name order, cut into files of at most max_bytes (a larger tensor gets a file of its own)."""
    files: list[dict] = [{}]
    size = 0
    for name in sorted(tensors):
        n = tensors[name].numel() * tensors[name].element_size()
        if files[-1] and size + n > max_bytes:
            files.append({})
            size = 0
        files[-1][name] = tensors[name]
        size += n
    return files


def export(folder: Path, out: Path, dtype: str, max_bytes: int) -> list[str]:
    """Write the HF folder for the checkpoint `folder`; returns the files written."""
    import torch
    import torch.distributed.checkpoint as dcp
    from checkpointing import read_commit
    from hfconfig import hf_config
    from model import Llama, config_from_dict
    from safetensors.torch import save_file
    from torch.distributed.checkpoint import FileSystemReader

    cfg = config_from_dict(read_commit(folder)["config"])  # type: ignore[index]
    model = Llama(cfg)
    state = {"model": model.state_dict()}
    if cfg.tie_embeddings:
        state["model"].pop("lm_head.weight")  # the same tensor as model.embed_tokens.weight
    dcp.load(state, storage_reader=FileSystemReader(folder), no_dist=True)  # any world size: resharded
    torch_dtype = getattr(torch, dtype)
    tensors = {k: v.detach().to(torch_dtype).contiguous() for k, v in state["model"].items()}
    out.mkdir(parents=True, exist_ok=True)
    files = shard(tensors, max_bytes)
    written = []
    if len(files) == 1:
        save_file(files[0], str(out / "model.safetensors"), metadata={"format": "pt"})
        written.append("model.safetensors")
    else:
        weight_map = {}
        for i, part in enumerate(files, 1):
            name = f"model-{i:05d}-of-{len(files):05d}.safetensors"
            save_file(part, str(out / name), metadata={"format": "pt"})
            weight_map |= dict.fromkeys(part, name)
            written.append(name)
        total = sum(t.numel() * t.element_size() for t in tensors.values())
        index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
        (out / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
        written.append("model.safetensors.index.json")
    (out / "config.json").write_text(json.dumps(hf_config(cfg, dtype), indent=2, sort_keys=True) + "\n")
    return ["config.json", *written]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        max_bytes = parse_size(args.max_shard_size)
        if args.step is not None and args.step < 1:
            raise ExportError(f"--step {args.step}: must be at least 1 (a checkpoint's step number)")
        folder = step_folder(Path(args.ckpt), args.step)
        out = Path(args.out)
        check_out(out)
        extra = tokenizer_files(args.tokenizer_from)
    except ExportError as e:
        print(f"export-hf: error: {e}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    written = export(folder, out, args.dtype, max_bytes)
    for f in extra:
        shutil.copyfile(f, out / f.name)
        written.append(f.name)
    print(f"exported {folder} to {out}: {', '.join(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
