"""model.py: Llama 3.1's RoPE scaling follows the published rule. The model against Meta's reference
formulation is in test_hfweights.py."""

from __future__ import annotations

import model
import torch


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


def test_a_meta_device_build_materialises_tied_with_the_same_rope_tables():
    """train.py builds on the meta device when the weights come from a checkpoint or --init-from: to_empty
    then tie_weights and init_rope give the tie and the tables a CPU build has."""
    cfg = model.LlamaConfig(tie_embeddings=True, rope_scaling=dict(model.PRESETS["8B"].rope_scaling))
    with torch.device("meta"):
        m = model.Llama(cfg)
    assert m.lm_head.weight.is_meta and not m.cos.is_meta  # no memory for the weights; the tables are small
    m.to_empty(device="cpu")
    assert m.lm_head.weight is not m.model.embed_tokens.weight  # what nn.Module._apply does to a tie
    m.tie_weights()
    m.init_rope("cpu")
    ref = model.Llama(cfg)
    assert m.lm_head.weight is m.model.embed_tokens.weight
    assert torch.equal(m.cos, ref.cos) and torch.equal(m.sin, ref.sin)
