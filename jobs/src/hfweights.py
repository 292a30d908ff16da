"""Released Hugging Face Llama weights to start from: config.json to LlamaConfig, safetensors into the model.

A Hugging Face model folder holds `config.json` (LlamaConfig's fields: transformers
src/transformers/models/llama/configuration_llama.py) and one `model.safetensors` or several shards with
`model.safetensors.index.json`. model.py names its parameters as LlamaForCausalLM does and applies RoPE
the same way (rotate_half), so the tensors load by name with no permutation: HF's converter already
permuted Meta's q/k weights into this layout (convert_llama_weights_to_hf.py `permute`).

Loading is DCP's Hugging Face reader (torch/distributed/checkpoint/hf_storage.py HuggingFaceStorageReader):
each rank reads only the slices its FSDP shards need, and the bf16 files are copied into the model's
fp32 master weights.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from checkpointing import failure_text
from model import LlamaConfig
from torch.distributed.checkpoint import HuggingFaceStorageReader
from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict


class HFError(ValueError):
    """A folder that is not a Hugging Face Llama model this trainer can start from; names the fix."""


def read_hf_config(folder: str | Path) -> LlamaConfig:
    """The LlamaConfig of a Hugging Face folder's config.json (the HF key names), or HFError."""
    path = Path(folder) / "config.json"
    try:
        c = json.loads(path.read_text())
    except FileNotFoundError:
        raise HFError(
            f"--init-from {folder}: no config.json there; pass a Hugging Face model folder"
        ) from None
    except ValueError as e:
        raise HFError(f"--init-from {folder}: config.json is not JSON ({e})") from None
    if c.get("model_type") != "llama":
        raise HFError(
            f"--init-from {folder}: config.json has model_type {c.get('model_type')!r}, not 'llama'"
        )
    if not sorted(Path(folder).glob("*.safetensors")):
        raise HFError(f"--init-from {folder}: no *.safetensors files there (pytorch_model.bin is not read)")
    for key in ("attention_bias", "mlp_bias"):
        if c.get(key):
            raise HFError(f"--init-from {folder}: config.json {key}: true is not a Llama this model builds")
    missing = [
        k
        for k in (
            "hidden_size",
            "intermediate_size",
            "num_hidden_layers",
            "num_attention_heads",
            "vocab_size",
        )
        if k not in c
    ]
    if missing:
        raise HFError(f"--init-from {folder}: config.json lacks {', '.join(missing)}")
    heads = c["num_attention_heads"]
    if c.get("head_dim", c["hidden_size"] // heads) != c["hidden_size"] // heads:
        raise HFError(f"--init-from {folder}: head_dim {c['head_dim']} != hidden_size / num_attention_heads")
    scaling = c.get("rope_scaling")
    rope_type = (scaling or {}).get("rope_type", (scaling or {}).get("type"))
    if scaling and rope_type != "llama3":
        raise HFError(f"--init-from {folder}: rope_scaling type {rope_type!r} is not supported (only llama3)")
    return LlamaConfig(
        vocab_size=c["vocab_size"],
        block_size=min(c.get("max_position_embeddings", 2048), 8192),
        n_layer=c["num_hidden_layers"],
        n_head=heads,
        n_kv_head=c.get("num_key_value_heads", heads),
        n_embd=c["hidden_size"],
        ffn_hidden=c["intermediate_size"],
        rope_theta=float(c.get("rope_theta", 10000.0)),
        norm_eps=float(c.get("rms_norm_eps", 1e-6)),
        tie_embeddings=bool(c.get("tie_word_embeddings", False)),
        rope_scaling=(
            {
                k: float(scaling[k])
                for k in ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
            }
            if scaling
            else None
        ),
    )


def load_hf_weights(model: torch.nn.Module, folder: str | Path) -> None:
    """Copy the folder's tensors into `model` (plain or FSDP-sharded) by name. A collective under FSDP."""
    state = get_model_state_dict(model)
    if getattr(model, "cfg", None) is not None and model.cfg.tie_embeddings:
        state.pop("lm_head.weight", None)  # the same tensor as model.embed_tokens.weight; HF omits it
    try:
        dcp.load(
            state, storage_reader=HuggingFaceStorageReader(str(folder)), no_dist=not dist.is_initialized()
        )
    except BaseException as e:  # noqa: BLE001  DCP's CheckpointException names the tensor
        raise HFError(f"--init-from {folder}: the weights do not fit this model: {failure_text(e)}") from e
    set_model_state_dict(model, state, options=None)
