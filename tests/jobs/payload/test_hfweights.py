"""`--init-from` a Hugging Face folder (jobs/payload/hfweights.py): model.py's Llama loaded from Meta's
reference weights gives the reference's logits, and what cannot be loaded is refused naming the key.

The reference (tests/jobs/llama_reference.py) is written from Meta's llama model.py, and its weights are
written to a Hugging Face folder the way transformers' convert_llama_weights_to_hf.py writes them: q and k
permuted for HF's rotate_half RoPE, the other tensors renamed. Our model loaded from that folder must give the
reference's logits; loading q and k unpermuted must not (so the test sees the permutation).
"""

from __future__ import annotations

import json
import subprocess

import hfweights
import pytest
import torch

from ..jobs_util import PY, REPO, SRC, base_env
from ..llama_reference import (
    DIM,
    EPS,
    HEADS,
    HIDDEN,
    KV_HEADS,
    LAYERS,
    THETA,
    VOCAB,
    loaded,
    meta_forward,
    meta_weights,
    write_hf_folder,
)


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


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"model_type": "mistral"}, "config.json has model_type 'mistral', not 'llama'"),
        ({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "rope_scaling type 'yarn' is not supported"),
        (
            {"rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": THETA}},
            "config.json rope_parameters type 'linear' is not supported (this model builds 'default' and "
            "'llama3' RoPE",
        ),
        (
            {"rope_parameters": {"rope_type": "default", "rope_theta": THETA, "factor": 8.0}},
            "config.json rope_parameters has key(s) factor that rope_type 'default' does not take (it takes "
            "partial_rotary_factor, rope_theta, rope_type, type): remove them",
        ),
        (
            {"rope_scaling": {"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0}},
            "config.json rope_scaling (rope_type 'llama3') lacks high_freq_factor",
        ),
        (
            {"rope_parameters": {"rope_type": "default", "rope_theta": THETA, "partial_rotary_factor": 0.5}},
            "partial_rotary_factor 0.5 is not supported",
        ),
        ({"hidden_act": "gelu"}, "config.json hidden_act 'gelu' is not supported"),
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


def test_every_problem_of_a_config_is_named_at_once(tmp_path):
    write_hf_folder(
        tmp_path / "hf",
        meta_weights(),
        model_type="mistral",
        mlp_bias=True,
        rope_parameters={"rope_type": "dynamic", "factor": 2.0},
    )
    with pytest.raises(hfweights.HFError) as e:
        hfweights.read_hf_config(tmp_path / "hf")
    assert str(e.value) == (
        f"--init-from {tmp_path / 'hf'}: config.json has model_type 'mistral', not 'llama'; "
        "config.json mlp_bias: true is not a Llama this model builds; "
        "config.json rope_parameters type 'dynamic' is not supported (this model builds 'default' and "
        "'llama3' RoPE; transformers modeling_rope_utils.py)"
    )


def test_init_from_naming_config_json_instead_of_its_folder_is_one_message(tmp_path):
    write_hf_folder(tmp_path / "hf", meta_weights())
    p = subprocess.run(
        [PY, str(SRC / "train.py"), "--init-from", str(tmp_path / "hf" / "config.json")],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr == (
        f"train.py: error: --init-from {tmp_path / 'hf' / 'config.json'}: is a file; pass the model folder "
        f"that holds config.json ({tmp_path / 'hf'})\n"
    )
