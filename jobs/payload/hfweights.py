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

from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from checkpointing import failure_text
from hfconfig import HFError, config_from_hf, read_config_json
from model import LlamaConfig
from torch.distributed.checkpoint import HuggingFaceStorageReader
from torch.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict


def read_hf_config(folder: str | Path) -> LlamaConfig:
    """The LlamaConfig of a Hugging Face folder's config.json (hfconfig.py reads both RoPE layouts), or
    HFError naming every problem."""
    cfg = config_from_hf(read_config_json(folder), folder)
    if not sorted(Path(folder).glob("*.safetensors")):
        raise HFError(f"--init-from {folder}: no *.safetensors files there (pytorch_model.bin is not read)")
    return cfg


def load_hf_weights(model: torch.nn.Module, folder: str | Path) -> None:
    """Copy the folder's tensors into `model` (plain or FSDP-sharded) by name. A collective under FSDP."""
    state = get_model_state_dict(model)
    tied = getattr(model, "cfg", None) is not None and model.cfg.tie_embeddings
    if tied:  # lm_head.weight is model.embed_tokens.weight (model.py); the files hold only the latter, as
        # transformers writes a tied model (LlamaForCausalLM._tied_weights_keys, modeling_llama.py)
        state.pop("lm_head.weight", None)
    try:
        dcp.load(
            state, storage_reader=HuggingFaceStorageReader(str(folder)), no_dist=not dist.is_initialized()
        )
    except BaseException as e:  # noqa: BLE001  DCP's CheckpointException names the tensor
        raise HFError(f"--init-from {folder}: the weights do not fit this model: {failure_text(e)}") from e
    if tied:  # the one tensor under both names, as load_state_dict expects of a tied module
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    set_model_state_dict(model, state, options=None)
