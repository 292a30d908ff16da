"""A Llama-architecture decoder (RMSNorm, rotary positions, SwiGLU, grouped-query attention): LlamaConfig.

The layout and parameter names are Hugging Face's LlamaForCausalLM (transformers
src/transformers/models/llama/modeling_llama.py): `model.embed_tokens`, `model.layers.N.self_attn.q_proj`,
..., `model.norm`, `lm_head`, so released weights load by name (hf.py) and our checkpoints name tensors
the way the rest of the ecosystem does. RoPE is applied the Hugging Face way too (`rotate_half`: dimension
i pairs with i + head_dim/2), which is the layout HF's converter permuted Meta's q/k weights into
(convert_llama_weights_to_hf.py `permute`): HF-format q_proj/k_proj therefore load unchanged.

The shape and its presets (tiny .. 8B) are in llamaconfig.py, which needs no torch (`jobs plan` reads it).

Activation checkpointing is part of each block (`Block.checkpointing`), so train.py's torch.compile of a
block compiles the checkpointed block (torchtitan's order: apply_ac, then apply_compile, then apply_fsdp):
"full" recomputes the whole block in backward, "selective" is torchtitan's per-op policy (SELECTIVE_SAVE).
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F
from llamaconfig import PRESETS, LlamaConfig
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

__all__ = ["CHECKPOINTING", "PRESETS", "Llama", "LlamaConfig", "config_from_dict"]

#: --activation-checkpointing's modes (jobs/activations.py counts the bytes each keeps).
CHECKPOINTING = ("none", "selective", "full")
#: SDPA's enable_gqa (torch 2.5+: torch.nn.functional.scaled_dot_product_attention's docstring; it runs on
#: the flash and math kernels, and CPU's flash kernel) lets each key/value head serve its query heads without
#: the copies repeat_interleave makes; older torch repeats them.
SDPA_GQA = tuple(int(v) for v in torch.__version__.split(".")[:2]) >= (2, 5)


def _ops(*names: str) -> set:
    """The aten overloads named `op.overload` that this torch has (a missing one is skipped)."""
    found = set()
    for name in names:
        op, overload = name.rsplit(".", 1)
        packet = getattr(torch.ops.aten, op, None)
        if packet is not None and hasattr(packet, overload):
            found.add(getattr(packet, overload))
    return found


#: Selective activation checkpointing: the ops whose outputs are saved (the rest is recomputed in backward),
#: torchtitan's per-op SAC (torchtitan/distributed/activation_checkpoint.py `_get_default_save_ops` and
#: `SelectiveAC`, commit b5bcd76c): matmuls (torch._functorch.partitioners get_default_op_list's
#: compute-intensive ops) and every SDPA kernel, except every second matmul of a block, which is recomputed.
#: `_scaled_dot_product_flash_attention_for_cpu` is added here: CPU's flash kernel, so a CPU run saves what a
#: GPU run does (torchtitan lists the CUDA kernels only). In this model's block the matmuls run q, k, v, o,
#: gate, up, down: q, v, gate and down are saved, k, o and up recomputed. torchtitan's llama3 8B config uses
#: it (torchtitan/models/llama3/config_registry.py `llama3_8b`: SelectiveAC); its 70B and 405B use full.
MATMULS = _ops("mm.default", "linear.default")
SELECTIVE_SAVE = MATMULS | _ops(
    "addmm.default",
    "bmm.default",
    "_scaled_mm.default",
    "_scaled_dot_product_flash_attention.default",
    "_scaled_dot_product_efficient_attention.default",
    "_scaled_dot_product_cudnn_attention.default",
    "_scaled_dot_product_attention_math.default",
    "_scaled_dot_product_fused_attention_overrideable.default",
    "_scaled_dot_product_flash_attention_for_cpu.default",
    "_flash_attention_forward.default",
    "_efficient_attention_forward.default",
    "max.default",
)


def selective_policy() -> Any:
    """A fresh policy per checkpointed forward (its matmul count restarts with each block, and again for the
    block's recompute in backward), as torchtitan's `_get_custom_policy`."""
    count = {"forward": 0, "recompute": 0}

    def policy(ctx: Any, func: Any, *args: Any, **kwargs: Any) -> CheckpointPolicy:
        mode = "recompute" if ctx.is_recompute else "forward"
        if func in MATMULS:
            count[mode] += 1
            if count[mode] % 2 == 0:
                return CheckpointPolicy.PREFER_RECOMPUTE
        return CheckpointPolicy.MUST_SAVE if func in SELECTIVE_SAVE else CheckpointPolicy.PREFER_RECOMPUTE

    return policy


def selective_context() -> Any:
    return create_selective_checkpoint_contexts(selective_policy())


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
        if SDPA_GQA and groups > 1:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:
            k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # flash kernel on GPU and CPU
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
    def __init__(self, cfg: LlamaConfig, checkpointing: str = "none") -> None:
        super().__init__()
        self.checkpointing = checkpointing  # CHECKPOINTING: recompute in backward none, per op, or all
        self.input_layernorm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        if self.checkpointing == "none" or not self.training:
            return self.compute(x, cos, sin)
        context = {"context_fn": selective_context} if self.checkpointing == "selective" else {}
        return checkpoint(self.compute, x, cos, sin, use_reentrant=False, **context)

    def compute(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Body(nn.Module):
    """HF's LlamaModel: embeddings, the blocks, the final norm (the `model.` prefix of the names)."""

    def __init__(self, cfg: LlamaConfig, checkpointing: str = "none") -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.layers = nn.ModuleList(Block(cfg, checkpointing) for _ in range(cfg.n_layer))
        self.norm = RMSNorm(cfg.n_embd, cfg.norm_eps)


class Llama(nn.Module):
    def __init__(self, cfg: LlamaConfig, activation_checkpointing: str | bool = "none") -> None:
        """activation_checkpointing: one of CHECKPOINTING (True is "full", False "none")."""
        super().__init__()
        self.cfg = cfg
        mode = activation_checkpointing
        if isinstance(mode, bool):
            mode = "full" if mode else "none"
        if mode not in CHECKPOINTING:
            raise ValueError(f"activation_checkpointing {activation_checkpointing!r}: one of {CHECKPOINTING}")
        self.activation_checkpointing = mode
        self.model = Body(cfg, mode)
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
            x = block(x, cos, sin)  # checkpointed inside when activation_checkpointing says so
        logits = self.lm_head(self.model.norm(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1))


def config_from_dict(d: dict[str, Any]) -> LlamaConfig:
    return LlamaConfig(**{k: v for k, v in d.items() if k in LlamaConfig.__dataclass_fields__})
