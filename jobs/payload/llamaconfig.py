"""The Llama model's shape (LlamaConfig), its presets and its parameter count. No torch: `jobs plan` and the
unmount timeout read it too.

Presets from tiny (tests, CPU) to Llama 3.1 8B; the released ones are the published config.json of
meta-llama/Llama-3.2-1B, Llama-3.2-3B and Llama-3.1-8B on Hugging Face (hidden_size, intermediate_size,
num_hidden_layers, num_attention_heads, num_key_value_heads, vocab_size, rope_theta, rope_scaling,
tie_word_embeddings), the same shapes as torchtitan's llama3 flavors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Llama 3's RoPE frequency scaling (HF config.json "rope_scaling" with rope_type "llama3").
LLAMA3_ROPE = {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}


@dataclass
class LlamaConfig:
    """The model's shape. A checkpoint stores it (train.py resumes with it)."""

    vocab_size: int = 512
    block_size: int = 64  # the training context in tokens (RoPE tables are built for it)
    n_layer: int = 2
    n_head: int = 4
    n_kv_head: int = 2  # grouped-query attention: n_head / n_kv_head query heads share a key/value head
    n_embd: int = 64
    ffn_hidden: int = 192  # SwiGLU's hidden width (HF intermediate_size)
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    tie_embeddings: bool = False
    rope_scaling: dict[str, float] | None = field(default=None)
    # A Hugging Face folder's max_position_embeddings (--init-from), written back by export: block_size is
    # the training context, often shorter. None: block_size.
    max_position_embeddings: int | None = None

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    def problem(self) -> str | None:
        """Why this shape cannot be built, naming the flags, or None."""
        if self.n_embd % self.n_head:
            return f"--n-embd {self.n_embd} must be a multiple of --n-head {self.n_head}"
        if self.head_dim % 2:
            return f"--n-embd / --n-head = {self.head_dim} must be even (rotary embeddings rotate pairs)"
        if self.n_head % self.n_kv_head:
            return f"--n-head {self.n_head} must be a multiple of --n-kv-head {self.n_kv_head}"
        return None


PRESETS: dict[str, LlamaConfig] = {
    "tiny": LlamaConfig(),
    "small": LlamaConfig(  # ~0.1B: a GPU smoke test of the real code paths
        vocab_size=32000, block_size=1024, n_layer=12, n_head=12, n_kv_head=4, n_embd=768, ffn_hidden=2048
    ),
    "1B": LlamaConfig(  # meta-llama/Llama-3.2-1B config.json
        vocab_size=128256,
        block_size=8192,
        n_layer=16,
        n_head=32,
        n_kv_head=8,
        n_embd=2048,
        ffn_hidden=8192,
        rope_theta=500000.0,
        tie_embeddings=True,
        rope_scaling={**LLAMA3_ROPE, "factor": 32.0},
    ),
    "3B": LlamaConfig(  # meta-llama/Llama-3.2-3B config.json
        vocab_size=128256,
        block_size=8192,
        n_layer=28,
        n_head=24,
        n_kv_head=8,
        n_embd=3072,
        ffn_hidden=8192,
        rope_theta=500000.0,
        tie_embeddings=True,
        rope_scaling={**LLAMA3_ROPE, "factor": 32.0},
    ),
    "8B": LlamaConfig(  # meta-llama/Llama-3.1-8B config.json
        vocab_size=128256,
        block_size=8192,
        n_layer=32,
        n_head=32,
        n_kv_head=8,
        n_embd=4096,
        ffn_hidden=14336,
        rope_theta=500000.0,
        rope_scaling=dict(LLAMA3_ROPE),
    ),
}


def param_count(cfg: LlamaConfig) -> int:
    """Every parameter of model.py's Llama for `cfg`: embeddings, per block 2 RMSNorms, q/k/v/o and SwiGLU's
    three matrices (no biases), the final norm, and lm_head unless tied to the embeddings."""
    c, kv = cfg.n_embd, cfg.n_kv_head * cfg.head_dim
    block = 2 * c + c * c + 2 * c * kv + c * c + 3 * c * cfg.ffn_hidden
    head = 0 if cfg.tie_embeddings else cfg.vocab_size * c
    return cfg.vocab_size * c + cfg.n_layer * block + c + head
