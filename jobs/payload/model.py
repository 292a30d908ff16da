"""A Llama-architecture decoder (RMSNorm, rotary positions, SwiGLU, grouped-query attention): LlamaConfig.

The layout and parameter names are Hugging Face's LlamaForCausalLM (transformers
src/transformers/models/llama/modeling_llama.py): `model.embed_tokens`, `model.layers.N.self_attn.q_proj`,
..., `model.norm`, `lm_head`, so released weights load by name (hf.py) and our checkpoints name tensors
the way the rest of the ecosystem does. RoPE is applied the Hugging Face way too (`rotate_half`: dimension
i pairs with i + head_dim/2), which is the layout HF's converter permuted Meta's q/k weights into
(convert_llama_weights_to_hf.py `permute`): HF-format q_proj/k_proj therefore load unchanged.

The shape and its presets (tiny .. 8B) are in llamaconfig.py, which needs no torch (`jobs plan` reads it).
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from llamaconfig import PRESETS, LlamaConfig
from torch.utils.checkpoint import checkpoint

__all__ = ["PRESETS", "Llama", "LlamaConfig", "config_from_dict"]


def inv_frequencies(cfg: LlamaConfig) -> torch.Tensor:
    """RoPE's inverse frequencies, with Llama 3's scaling when the config has one: wavelengths longer than
    original/low_freq_factor are divided by `factor`, shorter than original/high_freq_factor kept, and the
    band between interpolated (transformers modeling_rope_utils.py `_compute_llama3_parameters`)."""
    d = cfg.head_dim
    inv = 1.0 / (cfg.rope_theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    s = cfg.rope_scaling
    if not s:
        return inv.float()
    factor, lo, hi, old = (
        s["factor"],
        s["low_freq_factor"],
        s["high_freq_factor"],
        s["original_max_position_embeddings"],
    )
    wavelen = 2 * math.pi / inv
    smooth = (old / wavelen - lo) / (hi - lo)
    scaled = torch.where(wavelen > old / lo, inv / factor, inv)
    medium = (wavelen <= old / lo) & (wavelen >= old / hi)
    return torch.where(medium, (1 - smooth) * inv / factor + smooth * inv, scaled).float()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()  # in fp32, as HF's LlamaRMSNorm
        return self.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


class Attention(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.n_head, self.n_kv_head, self.head_dim = cfg.n_head, cfg.n_kv_head, cfg.head_dim
        self.q_proj = nn.Linear(cfg.n_embd, cfg.n_head * cfg.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.n_embd, cfg.n_kv_head * cfg.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.n_embd, cfg.n_kv_head * cfg.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.n_head * cfg.head_dim, cfg.n_embd, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv_head, self.head_dim).transpose(1, 2)
        q = (q * cos + rotate_half(q) * sin).to(v.dtype)
        k = (k * cos + rotate_half(k) * sin).to(v.dtype)
        groups = self.n_head // self.n_kv_head  # each key/value head serves `groups` query heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # flash kernel on GPU, math on CPU
        return self.o_proj(y.transpose(1, 2).reshape(B, T, -1))


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.n_embd, cfg.ffn_hidden, bias=False)
        self.up_proj = nn.Linear(cfg.n_embd, cfg.ffn_hidden, bias=False)
        self.down_proj = nn.Linear(cfg.ffn_hidden, cfg.n_embd, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Body(nn.Module):
    """HF's LlamaModel: embeddings, the blocks, the final norm (the `model.` prefix of the names)."""

    def __init__(self, cfg: LlamaConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = RMSNorm(cfg.n_embd, cfg.norm_eps)


class Llama(nn.Module):
    def __init__(self, cfg: LlamaConfig, activation_checkpointing: bool = False) -> None:
        super().__init__()
        self.cfg = cfg
        self.activation_checkpointing = activation_checkpointing
        self.model = Body(cfg)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.tie_weights()
        self.apply(self._init_weights)
        self.init_rope()

    def tie_weights(self) -> None:
        """lm_head.weight is model.embed_tokens.weight when the config ties them (transformers'
        `_tied_weights_keys`), again after `to_empty`: nn.Module._apply gives each name its own tensor
        (FSDP2's sharded parameters stay tied)."""
        if self.cfg.tie_embeddings and self.lm_head.weight is not self.model.embed_tokens.weight:
            self.lm_head.weight = self.model.embed_tokens.weight

    def init_rope(self, device: torch.device | str | None = None) -> None:
        """The RoPE tables: buffers, not parameters and not in the state dict, rebuilt from the config on
        every start (on the CPU, even under torch.device("meta")), and again after a meta-device build is
        materialised (`to_empty` leaves them uninitialised)."""
        with torch.device("cpu"):  # computed in fp32 on the CPU: the same numbers whatever the device
            angles = torch.outer(
                torch.arange(self.cfg.block_size, dtype=torch.float32), inv_frequencies(self.cfg)
            )
            emb = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", emb.cos().to(device or "cpu"), persistent=False)
        self.register_buffer("sin", emb.sin().to(device or "cpu"), persistent=False)

    @staticmethod
    def _init_weights(m: nn.Module) -> None:
        if isinstance(m, nn.Linear | nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)  # HF LlamaConfig initializer_range

    def num_params(self) -> int:
        """Parameters that do FLOPs per token: all but the embedding lookup (unless tied to lm_head)."""
        n = sum(p.numel() for p in self.parameters())
        return n if self.cfg.tie_embeddings else n - self.model.embed_tokens.weight.numel()

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None) -> torch.Tensor:
        T = idx.shape[1]
        cos, sin = self.cos[:T], self.sin[:T]
        x = self.model.embed_tokens(idx)
        for block in self.model.layers:
            if self.activation_checkpointing and self.training:
                x = checkpoint(block, x, cos, sin, use_reentrant=False)  # recompute in backward
            else:
                x = block(x, cos, sin)
        logits = self.lm_head(self.model.norm(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1))


def config_from_dict(d: dict[str, Any]) -> LlamaConfig:
    return LlamaConfig(**{k: v for k, v in d.items() if k in LlamaConfig.__dataclass_fields__})
