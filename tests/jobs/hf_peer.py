"""transformers itself as the peer of --init-from and export: tiny LlamaForCausalLM folders written by its own
save_pretrained (transformers 5: RoPE under `rope_parameters`), the same folder in transformers 4's layout
(`rope_theta` + `rope_scaling`), and its logits for the same tokens."""

from __future__ import annotations

import json
from pathlib import Path

import torch
import transformers

VOCAB, DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, MAX_POS = 256, 64, 96, 2, 4, 2, 128
LLAMA3 = {
    "rope_type": "llama3",
    "rope_theta": 500000.0,
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 16,  # short, so positions past it in the test use the scaling
}


def hf_config(tie: bool = False, rope: dict | None = None) -> transformers.LlamaConfig:
    return transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=DIM,
        intermediate_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        max_position_embeddings=MAX_POS,
        rms_norm_eps=1e-5,
        tie_word_embeddings=tie,
        rope_parameters=dict(rope if rope is not None else LLAMA3),
    )


def save_hf(folder: Path, tie: bool = False, rope: dict | None = None, seed: int = 0) -> torch.nn.Module:
    """transformers' own model with random weights (norms too, so they matter), saved by save_pretrained."""
    torch.manual_seed(seed)
    model = transformers.LlamaForCausalLM(hf_config(tie, rope)).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(
                1 + 0.1 * torch.randn_like(p) if name.endswith("norm.weight") else 0.2 * torch.randn_like(p)
            )
    model.save_pretrained(folder)
    return model


def to_transformers4_layout(folder: Path) -> dict:
    """Rewrite folder/config.json as transformers 4 and Meta's releases wrote it: rope_theta at the top,
    llama3's factors under rope_scaling (with `rope_type`), no rope_parameters. Returns the new config."""
    c = json.loads((folder / "config.json").read_text())
    rp = c.pop("rope_parameters")
    c["rope_theta"] = rp.pop("rope_theta")
    if rp.get("rope_type") != "default":
        c["rope_scaling"] = rp
    (folder / "config.json").write_text(json.dumps(c))
    return c


def hf_logits(folder: Path, tokens: torch.Tensor) -> torch.Tensor:
    """transformers' logits for `tokens` from the folder, loaded strictly (no missing/unexpected keys)."""
    with torch.no_grad():
        return from_pretrained(folder)(tokens).logits


def from_pretrained(folder: Path) -> transformers.LlamaForCausalLM:
    """transformers' model from the folder, loaded strictly: nothing missing, unexpected or mismatched."""
    model, info = transformers.LlamaForCausalLM.from_pretrained(
        folder, output_loading_info=True, dtype=torch.float32
    )
    assert {k: v for k, v in info.items() if v} == {}
    return model.eval()


def ours_with(hf_model: torch.nn.Module, folder: Path) -> torch.nn.Module:
    """model.py's Llama of the folder's config.json holding transformers' loaded weights (strict)."""
    import hfconfig
    from model import Llama

    model = Llama(hfconfig.config_from_hf(json.loads((folder / "config.json").read_text()), folder)).eval()
    model.load_state_dict(hf_model.state_dict(), strict=True)
    return model
