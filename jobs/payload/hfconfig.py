"""A Hugging Face Llama config.json to LlamaConfig and back. No torch (export and `jobs` read it too).

transformers writes RoPE two ways, and both are read here the way transformers reads them
(src/transformers/modeling_rope_utils.py, RotaryEmbeddingConfigMixin, transformers 5.25):
- transformers 4 (and Meta's released Llama 3.x folders): `rope_theta` at the top level and, for Llama 3's
  scaling, a `rope_scaling` dict (`rope_type`, or its older name `type`, "llama3").
- transformers 5: one `rope_parameters` dict holding `rope_type` and `rope_theta` (and llama3's factors).
`convert_rope_params_to_dict`: a `rope_scaling` dict takes the place of `rope_parameters`; `rope_theta`
inside the dict wins over the top-level one, which wins over `default_theta` (10,000);
`standardize_rope_params`: the type defaults to `type` then "default", and llama3's
`original_max_position_embeddings` to `max_position_embeddings`. The keys each type takes are
`_validate_default_rope_parameters` and `_validate_llama3_rope_parameters`'s required and optional ones
(plus `partial_rotary_factor`, which `_check_received_keys` always allows): transformers only warns about
another key, this trainer refuses it by name, as it refuses a type its model.py does not build.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from llamaconfig import LlamaConfig

DEFAULT_THETA = 10_000.0  # transformers RotaryEmbeddingConfigMixin.default_theta
LLAMA3_FACTORS = ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")
#: rope_type -> the keys its dict may hold (transformers _validate_<type>_rope_parameters).
ROPE_KEYS: dict[str, set[str]] = {
    "default": {"rope_type", "type", "rope_theta", "partial_rotary_factor"},
    "llama3": {"rope_type", "type", "rope_theta", "partial_rotary_factor", *LLAMA3_FACTORS},
}
MAX_BLOCK = 8192  # the longest training context train.py builds RoPE tables for by default


class HFError(ValueError):
    """A folder that is not a Hugging Face Llama model this trainer can start from; names the fix."""


def read_config_json(folder: str | Path) -> dict[str, Any]:
    """The parsed config.json of a Hugging Face model folder, or HFError naming the fix."""
    p = Path(folder)
    if p.is_file():
        hint = f" ({p.parent})" if p.name == "config.json" else ""
        raise HFError(f"--init-from {folder}: is a file; pass the model folder that holds config.json{hint}")
    try:
        c = json.loads((p / "config.json").read_text())
    except FileNotFoundError:
        raise HFError(
            f"--init-from {folder}: no config.json there; pass a Hugging Face model folder"
        ) from None
    except (ValueError, UnicodeDecodeError) as e:
        raise HFError(f"--init-from {folder}: config.json is not JSON ({e})") from None
    if not isinstance(c, dict):
        raise HFError(f"--init-from {folder}: config.json is not a JSON object")
    return c


def rope_of(c: dict[str, Any], problems: list[str]) -> tuple[float, dict[str, float] | None]:
    """(rope_theta, llama3 scaling or None) of a config.json dict; what cannot be built goes to `problems`."""
    source = "rope_scaling" if c.get("rope_scaling") else "rope_parameters"
    rp = c.get("rope_scaling") or c.get("rope_parameters") or {}
    if not isinstance(rp, dict):
        problems.append(f"config.json {source} is {type(rp).__name__}, not an object")
        return DEFAULT_THETA, None
    theta = rp.get("rope_theta", c.get("rope_theta", DEFAULT_THETA))
    rope_type = rp.get("rope_type", rp.get("type", "default"))
    if rope_type not in ROPE_KEYS:
        problems.append(
            f"config.json {source} type {rope_type!r} is not supported (this model builds "
            f"{' and '.join(repr(t) for t in ROPE_KEYS)} RoPE; transformers modeling_rope_utils.py)"
        )
        return DEFAULT_THETA, None
    unknown = sorted(set(rp) - ROPE_KEYS[rope_type])
    if unknown:
        problems.append(
            f"config.json {source} has key(s) {', '.join(unknown)} that rope_type {rope_type!r} does not "
            f"take (it takes {', '.join(sorted(ROPE_KEYS[rope_type]))}): remove them"
        )
    if rp.get("partial_rotary_factor", 1.0) != 1.0:
        problems.append(
            f"config.json {source} partial_rotary_factor {rp['partial_rotary_factor']} is not supported "
            "(this model rotates every dimension: 1.0)"
        )
    if not isinstance(theta, int | float) or isinstance(theta, bool) or theta <= 0:
        problems.append(f"config.json rope_theta {theta!r} is not a positive number")
        theta = DEFAULT_THETA
    if rope_type == "default":
        return float(theta), None
    scaling = dict(rp)
    scaling.setdefault("original_max_position_embeddings", c.get("max_position_embeddings", 2048))
    missing = [k for k in LLAMA3_FACTORS if k not in scaling]
    if missing:
        problems.append(f"config.json {source} (rope_type 'llama3') lacks {', '.join(missing)}")
        return float(theta), None
    bad = [k for k in LLAMA3_FACTORS if not isinstance(scaling[k], int | float) or scaling[k] <= 0]
    if bad:
        problems.append(f"config.json {source} {', '.join(bad)} must be positive numbers")
        return float(theta), None
    if scaling["high_freq_factor"] <= scaling["low_freq_factor"]:
        problems.append(f"config.json {source} high_freq_factor must be greater than low_freq_factor")
    return float(theta), {k: float(scaling[k]) for k in LLAMA3_FACTORS}


def config_from_hf(c: dict[str, Any], folder: str | Path) -> LlamaConfig:
    """The LlamaConfig of a config.json dict (the HF key names), or one HFError naming every problem."""
    problems: list[str] = []
    if c.get("model_type") != "llama":
        problems.append(f"config.json has model_type {c.get('model_type')!r}, not 'llama'")
    for key in ("attention_bias", "mlp_bias"):
        if c.get(key):
            problems.append(f"config.json {key}: true is not a Llama this model builds")
    if c.get("hidden_act", "silu") != "silu":
        problems.append(f"config.json hidden_act {c['hidden_act']!r} is not supported (SwiGLU: 'silu')")
    needed = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
    missing = [k for k in needed if k not in c]
    if missing:
        problems.append(f"config.json lacks {', '.join(missing)}")
    theta, scaling = rope_of(c, problems)
    if not missing:
        heads = c["num_attention_heads"]
        if c.get("head_dim") not in (None, c["hidden_size"] // heads):
            problems.append(f"config.json head_dim {c['head_dim']} != hidden_size / num_attention_heads")
    if problems:
        raise HFError(f"--init-from {folder}: " + "; ".join(problems))
    heads = c["num_attention_heads"]
    max_pos = int(c.get("max_position_embeddings", 2048))
    return LlamaConfig(
        vocab_size=c["vocab_size"],
        block_size=min(max_pos, MAX_BLOCK),
        n_layer=c["num_hidden_layers"],
        n_head=heads,
        n_kv_head=c.get("num_key_value_heads") or heads,
        n_embd=c["hidden_size"],
        ffn_hidden=c["intermediate_size"],
        rope_theta=theta,
        norm_eps=float(c.get("rms_norm_eps", 1e-6)),
        tie_embeddings=bool(c.get("tie_word_embeddings", False)),
        rope_scaling=scaling,
        max_position_embeddings=max_pos,
    )


def hf_config(cfg: LlamaConfig, dtype: str) -> dict[str, Any]:
    """config.json for `cfg` as transformers 5 writes it (LlamaConfig.to_dict: `rope_parameters`)."""
    rope: dict[str, Any] = {
        "rope_type": "llama3" if cfg.rope_scaling else "default",
        "rope_theta": cfg.rope_theta,
    }
    if cfg.rope_scaling:
        rope |= {k: cfg.rope_scaling[k] for k in LLAMA3_FACTORS}
        rope["original_max_position_embeddings"] = int(rope["original_max_position_embeddings"])
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "attention_bias": False,
        "mlp_bias": False,
        "hidden_act": "silu",
        "dtype": dtype,
        "head_dim": cfg.head_dim,
        "hidden_size": cfg.n_embd,
        "intermediate_size": cfg.ffn_hidden,
        "max_position_embeddings": cfg.max_position_embeddings or cfg.block_size,
        "num_attention_heads": cfg.n_head,
        "num_hidden_layers": cfg.n_layer,
        "num_key_value_heads": cfg.n_kv_head,
        "rms_norm_eps": cfg.norm_eps,
        "rope_parameters": rope,
        "tie_word_embeddings": cfg.tie_embeddings,
        "vocab_size": cfg.vocab_size,
    }
