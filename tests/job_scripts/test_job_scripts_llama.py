"""model.py's Llama against Meta's reference formulation, and `--init-from` a Hugging Face folder.

The reference below is written from Meta's llama model.py (meta-llama/llama3 llama/model.py:
precompute_freqs_cis, apply_rotary_emb on interleaved pairs as complex numbers, repeat_kv, RMSNorm,
FeedForward w2(silu(w1 x) * w3 x)). Its weights are written to a Hugging Face folder the way transformers'
convert_llama_weights_to_hf.py writes them: q and k permuted for HF's rotate_half RoPE, the other tensors
renamed. Our model loaded from that folder must give the reference's logits; loading q and k unpermuted
must not (so the test sees the permutation).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from jobscripts_util import PY, REPO, SRC, LocalRun, base_env, fingerprint
from safetensors.torch import save_file

sys.path.insert(0, str(SRC))
import hfweights  # noqa: E402
import train  # noqa: E402
from model import Llama  # noqa: E402

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


def test_hf_weights_give_metas_reference_logits_and_unpermuted_ones_do_not(tmp_path):
    wts = meta_weights()
    tokens = torch.randint(0, VOCAB, (2, 24), generator=torch.Generator().manual_seed(1))
    expected = meta_forward(wts, tokens)
    write_hf_folder(tmp_path / "hf", wts)
    cfg = hfweights.read_hf_config(tmp_path / "hf")
    assert (cfg.n_embd, cfg.n_layer, cfg.n_head, cfg.n_kv_head, cfg.ffn_hidden) == (
        DIM,
        LAYERS,
        HEADS,
        KV_HEADS,
        HIDDEN,
    )
    assert (cfg.vocab_size, cfg.rope_theta, cfg.norm_eps, cfg.tie_embeddings) == (VOCAB, THETA, EPS, False)
    with torch.no_grad():
        got = loaded(tmp_path / "hf")(tokens)
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    write_hf_folder(tmp_path / "raw", wts, permute_qk=False)
    with torch.no_grad():
        wrong = loaded(tmp_path / "raw")(tokens)
    assert (wrong - expected).abs().max() > 1e-2


def test_llama3_rope_scaling_follows_the_published_rule():
    """Llama 3.1's scaling (factor 8, low 1, high 4, original 8192): wavelengths under 8192/4 = 2048
    tokens keep their frequency, those over 8192 are divided by 8, the band between interpolates."""
    from llamaconfig import PRESETS
    from model import inv_frequencies

    cfg = PRESETS["8B"]
    base = 1.0 / (cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2, dtype=torch.float64) / cfg.head_dim))
    wavelen = 2 * torch.pi / base
    got = inv_frequencies(cfg).double()
    high, low = wavelen < 2048, wavelen > 8192
    assert high.any() and low.any() and (~high & ~low).any()
    torch.testing.assert_close(got[high], base[high].float().double())
    torch.testing.assert_close(got[low], (base[low] / 8).float().double())
    mid = ~high & ~low
    assert torch.all(got[mid] < base[mid]) and torch.all(got[mid] > base[mid] / 8)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"model_type": "mistral"}, "config.json has model_type 'mistral', not 'llama'"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "rope_scaling type 'yarn' is not supported"),
        ({"attention_bias": True}, "config.json attention_bias: true is not a Llama this model builds"),
        ({"hidden_size": DIM * 2, "num_attention_heads": HEADS * 2}, "the weights do not fit this model"),
    ],
)
def test_init_from_refuses_what_it_cannot_load_naming_the_key(tmp_path, change, needle):
    write_hf_folder(tmp_path / "hf", meta_weights())
    cfg = json.loads((tmp_path / "hf" / "config.json").read_text()) | change
    (tmp_path / "hf" / "config.json").write_text(json.dumps(cfg))
    p = subprocess.run(
        [PY, str(SRC / "train.py"), "--init-from", str(tmp_path / "hf"), "--steps", "1"],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.startswith(f"train.py: error: --init-from {tmp_path / 'hf'}: ") and needle in p.stderr


def test_init_from_a_folder_without_weights_or_config_names_the_fix(tmp_path):
    (tmp_path / "empty").mkdir()
    for args, needle in (
        (["--init-from", str(tmp_path / "empty")], "no config.json there; pass a Hugging Face model folder"),
        (["--init-from", str(tmp_path / "empty"), "--model", "tiny"], "--model and --init-from both give"),
    ):
        p = subprocess.run(
            [PY, str(SRC / "train.py"), *args], env=base_env(), capture_output=True, text=True, timeout=120
        )
        assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_fsdp_ranks_start_from_the_hf_weights(tmp_path):
    """2 FSDP ranks load their shards of the folder; with --lr 0 the weights after a step are exactly the
    file's, the fingerprint an in-process load gives."""
    write_hf_folder(tmp_path / "hf", meta_weights())
    expected = train.fingerprint(loaded(tmp_path / "hf"))
    args = [
        "--parallel",
        "fsdp",
        "--init-from",
        str(tmp_path / "hf"),
        "--steps",
        "1",
        "--lr",
        "0",
        "--block-size",
        "16",
    ]
    rc, out, err = LocalRun(args, procs=2, logs=tmp_path / "logs").finish()
    assert rc == 0, out + err
    assert f"initialised from {tmp_path / 'hf'}" in out
    assert fingerprint(out) == expected
