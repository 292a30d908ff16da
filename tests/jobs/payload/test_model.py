"""model.py: Llama 3.1's RoPE scaling follows the published rule. The model against Meta's reference
formulation is in test_hfweights.py."""

from __future__ import annotations

import model
import pytest
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


def test_sdpa_enable_gqa_equals_the_repeated_key_value_heads(monkeypatch):
    """model.py hands SDPA the n_kv_head key/value heads with enable_gqa instead of repeating them for each
    query head: the logits and every gradient equal the repeated path's (fp32, CPU), bit for bit forward,
    within float rounding in backward (k and v's gradients are summed over their query heads in another
    order)."""
    assert model.SDPA_GQA  # the installed torch (2.13) has it
    cfg = model.LlamaConfig(vocab_size=256, block_size=32, n_layer=2, n_head=8, n_kv_head=2, n_embd=64)
    g = torch.Generator().manual_seed(3)
    x, y = torch.randint(0, 256, (2, 32), generator=g), torch.randint(0, 256, (2, 32), generator=g)
    runs = []
    for gqa in (True, False):
        monkeypatch.setattr(model, "SDPA_GQA", gqa)
        torch.manual_seed(0)
        m = model.Llama(cfg)
        loss = m(x, y)
        loss.backward()
        runs.append((m(x), {n: p.grad for n, p in m.named_parameters()}))
    (logits, grads), (logits_old, grads_old) = runs
    assert torch.equal(logits, logits_old)
    assert grads.keys() == grads_old.keys()
    for name in grads:
        torch.testing.assert_close(grads[name], grads_old[name], rtol=1e-5, atol=1e-7, msg=name)


@pytest.mark.parametrize("mode", ["selective", "full"])
def test_activation_checkpointing_recomputes_to_the_same_gradients(mode):
    """Checkpointed blocks (torchtitan's per-op selective policy, or the whole block) give the gradients of
    the plain forward, bit for bit (the recompute runs the same kernels on the same inputs); the old boolean
    spelling still means full, and an unknown mode is refused by name."""
    cfg = model.LlamaConfig(vocab_size=256, block_size=32, n_layer=2, n_head=4, n_kv_head=2, n_embd=64)
    g = torch.Generator().manual_seed(5)
    x, y = torch.randint(0, 256, (2, 32), generator=g), torch.randint(0, 256, (2, 32), generator=g)
    grads = {}
    for m_ in ("none", mode):
        torch.manual_seed(0)
        m = model.Llama(cfg, activation_checkpointing=m_)
        m(x, y).backward()
        grads[m_] = {n: p.grad for n, p in m.named_parameters()}
    for name, grad in grads["none"].items():
        assert torch.equal(grads[mode][name], grad), name
    assert model.Llama(cfg, activation_checkpointing=True).model.layers[0].checkpointing == "full"
    assert model.Llama(cfg, activation_checkpointing=False).model.layers[0].checkpointing == "none"
    with pytest.raises(ValueError, match="activation_checkpointing 'some'"):
        model.Llama(cfg, activation_checkpointing="some")
