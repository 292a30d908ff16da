"""Meta's reference Llama and a Hugging Face folder of its weights, for the tests of `--init-from`
(tests/jobs/payload/test_hfweights.py, and the FSDP ranks in tests/integration/job_scripts).

The reference is written from Meta's llama model.py (meta-llama/llama3 llama/model.py: precompute_freqs_cis,
apply_rotary_emb on interleaved pairs as complex numbers, repeat_kv, RMSNorm, FeedForward
w2(silu(w1 x) * w3 x)). Its weights are written to a Hugging Face folder the way transformers'
convert_llama_weights_to_hf.py writes them: q and k permuted for HF's rotate_half RoPE, the other tensors
renamed.
"""

from __future__ import annotations

import json

import hfweights
import torch
from model import Llama
from safetensors.torch import save_file

DIM, LAYERS, HEADS, KV_HEADS, HIDDEN, VOCAB, THETA, EPS = 64, 2, 4, 2, 96, 256, 500000.0, 1e-5
HEAD_DIM = DIM // HEADS


def meta_weights(seed: int = 0) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)

    def w(*shape):
        return torch.randn(*shape, generator=g) * 0.2

    out = {"tok_embeddings.weight": w(VOCAB, DIM), "norm.weight": 1 + w(DIM), "output.weight": w(VOCAB, DIM)}
    for i in range(LAYERS):
        out |= {
            f"layers.{i}.attention.wq.weight": w(HEADS * HEAD_DIM, DIM),
            f"layers.{i}.attention.wk.weight": w(KV_HEADS * HEAD_DIM, DIM),
            f"layers.{i}.attention.wv.weight": w(KV_HEADS * HEAD_DIM, DIM),
            f"layers.{i}.attention.wo.weight": w(DIM, HEADS * HEAD_DIM),
            f"layers.{i}.feed_forward.w1.weight": w(HIDDEN, DIM),
            f"layers.{i}.feed_forward.w2.weight": w(DIM, HIDDEN),
            f"layers.{i}.feed_forward.w3.weight": w(HIDDEN, DIM),
            f"layers.{i}.attention_norm.weight": 1 + w(DIM),
            f"layers.{i}.ffn_norm.weight": 1 + w(DIM),
        }
    return out


def meta_forward(wts: dict[str, torch.Tensor], tokens: torch.Tensor) -> torch.Tensor:
    """Meta's reference Llama forward (no KV cache): RoPE on interleaved pairs (2i, 2i+1)."""

    def rms(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight

    B, T = tokens.shape
    freqs = 1.0 / (THETA ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM))
    freqs_cis = torch.polar(torch.ones(T, HEAD_DIM // 2), torch.outer(torch.arange(T).float(), freqs))

    def rope(x):  # (B, T, H, D)
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        return torch.view_as_real(xc * freqs_cis[None, :, None, :]).flatten(3)

    h = wts["tok_embeddings.weight"][tokens]
    mask = torch.full((T, T), float("-inf")).triu(1)
    for i in range(LAYERS):
        p = f"layers.{i}."
        x = rms(h, wts[p + "attention_norm.weight"])
        q = (x @ wts[p + "attention.wq.weight"].T).view(B, T, HEADS, HEAD_DIM)
        k = (x @ wts[p + "attention.wk.weight"].T).view(B, T, KV_HEADS, HEAD_DIM)
        v = (x @ wts[p + "attention.wv.weight"].T).view(B, T, KV_HEADS, HEAD_DIM)
        q, k = rope(q), rope(k)
        rep = HEADS // KV_HEADS  # repeat_kv: each kv head serves `rep` consecutive query heads
        k = k[:, :, :, None, :].expand(B, T, KV_HEADS, rep, HEAD_DIM).reshape(B, T, HEADS, HEAD_DIM)
        v = v[:, :, :, None, :].expand(B, T, KV_HEADS, rep, HEAD_DIM).reshape(B, T, HEADS, HEAD_DIM)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(2, 3) / HEAD_DIM**0.5 + mask
        att = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, -1)
        h = h + att @ wts[p + "attention.wo.weight"].T
        x = rms(h, wts[p + "ffn_norm.weight"])
        gate = torch.nn.functional.silu(x @ wts[p + "feed_forward.w1.weight"].T)
        h = h + (gate * (x @ wts[p + "feed_forward.w3.weight"].T)) @ wts[p + "feed_forward.w2.weight"].T
    return rms(h, wts["norm.weight"]) @ wts["output.weight"].T


def permute(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """convert_llama_weights_to_hf.py `permute`: interleaved pairs to halves, per head."""
    dim1, dim2 = w.shape
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


def write_hf_folder(folder, wts, permute_qk: bool = True, **config_overrides) -> None:
    """A Hugging Face Llama folder as the converter writes it (bf16 safetensors would round; fp32 here)."""
    folder.mkdir(parents=True, exist_ok=True)
    hf = {
        "model.embed_tokens.weight": wts["tok_embeddings.weight"],
        "model.norm.weight": wts["norm.weight"],
        "lm_head.weight": wts["output.weight"],
    }
    for i in range(LAYERS):
        p, m = f"layers.{i}.", f"model.layers.{i}."
        q, k = wts[p + "attention.wq.weight"], wts[p + "attention.wk.weight"]
        hf |= {
            m + "self_attn.q_proj.weight": permute(q, HEADS) if permute_qk else q,
            m + "self_attn.k_proj.weight": permute(k, KV_HEADS) if permute_qk else k,
            m + "self_attn.v_proj.weight": wts[p + "attention.wv.weight"],
            m + "self_attn.o_proj.weight": wts[p + "attention.wo.weight"],
            m + "mlp.gate_proj.weight": wts[p + "feed_forward.w1.weight"],
            m + "mlp.down_proj.weight": wts[p + "feed_forward.w2.weight"],
            m + "mlp.up_proj.weight": wts[p + "feed_forward.w3.weight"],
            m + "input_layernorm.weight": wts[p + "attention_norm.weight"],
            m + "post_attention_layernorm.weight": wts[p + "ffn_norm.weight"],
        }
    # Two files, as released models are sharded (model-00001-of-00002.safetensors, ...).
    names = sorted(hf)
    half = len(names) // 2
    for n, part in enumerate((names[:half], names[half:]), 1):
        save_file({k: hf[k].contiguous() for k in part}, str(folder / f"model-0000{n}-of-00002.safetensors"))
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": DIM,
        "intermediate_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "vocab_size": VOCAB,
        "max_position_embeddings": 128,
        "rms_norm_eps": EPS,
        "rope_theta": THETA,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    } | config_overrides
    (folder / "config.json").write_text(json.dumps(config))


def loaded(folder) -> Llama:
    model = Llama(hfweights.read_hf_config(folder))
    hfweights.load_hf_weights(model, folder)
    return model
