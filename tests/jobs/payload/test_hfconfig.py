"""--init-from against transformers itself (tests/jobs/hf_peer.py): folders written by LlamaForCausalLM's
own save_pretrained, in transformers 5's RoPE layout (`rope_parameters`) and in transformers 4's (`rope_theta`
+ `rope_scaling`), tied and untied, load into model.py's Llama with transformers' config and logits."""

from __future__ import annotations

import json
import subprocess

import hfweights
import pytest
import torch
from model import Llama

from ..hf_peer import LLAMA3, MAX_POS, VOCAB, hf_logits, save_hf, to_transformers4_layout
from ..jobs_util import PY, SRC, base_env

TOKENS = torch.randint(0, VOCAB, (2, 48), generator=torch.Generator().manual_seed(3))


def ours(folder) -> Llama:
    model = Llama(hfweights.read_hf_config(folder)).eval()
    hfweights.load_hf_weights(model, folder)
    return model


@pytest.mark.parametrize("layout", ["transformers5", "transformers4"])
@pytest.mark.parametrize("rope", ["llama3", "default"])
@pytest.mark.parametrize("tie", [False, True], ids=["untied", "tied"])
def test_a_folder_transformers_wrote_loads_with_its_rope_and_its_logits(tmp_path, layout, rope, tie):
    rp = LLAMA3 if rope == "llama3" else {"rope_type": "default", "rope_theta": 250000.0}
    save_hf(tmp_path / "hf", tie=tie, rope=rp)
    written = json.loads((tmp_path / "hf" / "config.json").read_text())
    assert written["rope_parameters"]["rope_type"] == rope and "rope_scaling" not in written  # transformers 5
    if layout == "transformers4":
        to_transformers4_layout(tmp_path / "hf")
    cfg = hfweights.read_hf_config(tmp_path / "hf")
    assert cfg.rope_theta == rp["rope_theta"] and cfg.tie_embeddings is tie
    assert cfg.max_position_embeddings == MAX_POS
    if rope == "llama3":
        assert cfg.rope_scaling == {
            k: float(v) for k, v in LLAMA3.items() if k not in ("rope_type", "rope_theta")
        }
    else:
        assert cfg.rope_scaling is None
    model = ours(tmp_path / "hf")
    if tie:
        assert model.lm_head.weight is model.model.embed_tokens.weight
    with torch.no_grad():
        got = model(TOKENS)
    torch.testing.assert_close(got, hf_logits(tmp_path / "hf", TOKENS), atol=2e-5, rtol=2e-5)


def test_a_tied_model_trains_from_the_folder(tmp_path):
    """Llama 3.2 1B/3B's layout: no lm_head.weight in the files. train.py loads it and takes steps."""
    save_hf(tmp_path / "hf", tie=True)
    p = subprocess.run(
        [
            PY,
            str(SRC / "train.py"),
            "--init-from",
            str(tmp_path / "hf"),
            "--steps",
            "2",
            "--block-size",
            "32",
        ],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    assert f"initialised from {tmp_path / 'hf'}" in p.stdout and "final parameters sha256" in p.stdout
