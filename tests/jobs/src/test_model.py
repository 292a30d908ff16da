"""model.py: Llama 3.1's RoPE scaling follows the published rule. The model against Meta's reference
formulation is in test_hfweights.py."""

from __future__ import annotations

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
