"""Activation memory and FLOPs per token of train.py's Llama (jobs/payload/model.py), for `jobs plan`. No
torch.

Activations: the bytes autograd keeps for backward at the end of one micro-batch's forward, counted tensor by
tensor for model.py's forward under bf16 compute (FSDP's MixedPrecisionPolicy param_dtype=bfloat16, or
autocast), per token, with h = n_embd, k = n_kv_head x head_dim (the key/value width), f = ffn_hidden,
a = n_head, V = vocab_size, p = 2 (bf16 bytes):

  per block   8h + 8            two RMSNorms: the fp32 upcast input (4h) and rsqrt (4) each (model.py RMSNorm
                                computes in fp32, as transformers' LlamaRMSNorm)
            + 2ph               the two RMSNorms' normalised bf16 outputs, saved for the weight multiply
            + ph + (ph + 2pk) + ph   attention: the q/k/v projections' input; q, k, v as SDPA saves them (with
                                enable_gqa, torch 2.5+, k and v are not repeated per query head); its output
                                (o_proj's input)
            + 4a                SDPA's fp32 log-sum-exp per head (flash and math kernels alike)
            + ph + 4pf          SwiGLU: gate/up's input; gate, silu(gate), up and their product
  = 8h + 8 + 6ph + 2pk + 4a + 4pf
  outside     16 + 4h + 4 + 2ph + 4V   input ids and targets (int64), the final norm, lm_head's input, and
                                the fp32 log-softmax of the logits cross-entropy keeps (model.py upcasts them)

Full activation checkpointing (`--activation-checkpointing full`, torch.utils.checkpoint per block) keeps each
block's input (ph) and, in backward, one block's set while it is recomputed. Selective (torchtitan's per-op
policy, model.py SELECTIVE_SAVE) keeps the block's input and the outputs of the ops it saves: the q, v, gate
and down matmuls (every second matmul is recomputed) and SDPA's output and log-sum-exp:
ph + p(h + k + f + h) + ph + 4a = p(4h + k + f) + 4a per block; in backward the rest of one block is
recomputed. The same counting as Korthikanti
et al., "Reducing Activation Recomputation in Large Transformer Models" (MLSys 2023, section 4.1: sbh(34 +
5as/h) for GPT), done for this model: SwiGLU instead of GELU, RMSNorm, no dropout, and fused attention (SDPA)
that keeps no a x s x s scores. tests/jobs/plan/test_activations.py checks it to the byte against what
autograd saves (torch.autograd.graph.saved_tensors_hooks, and the selective policy's cache) for model.py on
CPU in bf16 and fp32 at two small shapes.

FLOPs per token, three rules side by side (MFU is only comparable under the same rule):
- torchtitan's (its llama3 `get_nparams_and_flops`, after the PaLM paper's appendix B):
  6 x (parameters - embedding) + 12 x L x H x Q x T (the attention matmuls, causal sparsity not discounted);
- the seed's convention: 6 x all parameters;
- train.py's metrics record: 6 x parameters doing FLOPs (all but the embedding lookup, unless tied).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from jobs.payload.llamaconfig import LlamaConfig, param_count

MODES = ("none", "selective", "full")  # model.py CHECKPOINTING
BF16 = 2
GIB = 2**30
#: H100 SXM dense BF16 (NVIDIA H100 datasheet: 1,979 TFLOPS with sparsity), as train.py's PEAK_BF16_TFLOPS.
H100_PEAK_TFLOPS = 989.0


#: Each mode's per-token block term in bf16 (k: key/value width), as render prints it.
BLOCK_FORMULA = {
    "none": "L x (8h + 8 + 12h + 4k + 4a + 8f)",
    "selective": "L x (8h + 2k + 2f + 4a) + the rest of one block recomputed",
    "full": "L x 2h + one block's set recomputed",
}


def block_bytes_per_token(cfg: LlamaConfig, p: int = BF16) -> int:
    h, k, f, a = cfg.n_embd, cfg.n_kv_head * cfg.head_dim, cfg.ffn_hidden, cfg.n_head
    return 8 * h + 8 + 6 * p * h + 2 * p * k + 4 * a + 4 * p * f


def kept_bytes_per_token(cfg: LlamaConfig, mode: str, p: int = BF16) -> int:
    """What one block keeps per token under `mode` (MODES) until its backward."""
    if mode == "none":
        return block_bytes_per_token(cfg, p)
    h, k, f, a = cfg.n_embd, cfg.n_kv_head * cfg.head_dim, cfg.ffn_hidden, cfg.n_head
    return p * h + (p * (3 * h + k + f) + 4 * a if mode == "selective" else 0)


def outside_bytes_per_token(cfg: LlamaConfig, p: int = BF16) -> int:
    h = cfg.n_embd
    return 16 + 4 * h + 4 + 2 * p * h + 4 * cfg.vocab_size


def saved_bytes(cfg: LlamaConfig, tokens: int, mode: str, p: int = BF16) -> int:
    """What autograd holds at the end of forward for `tokens` (micro-batch x sequence) tokens."""
    return tokens * (cfg.n_layer * kept_bytes_per_token(cfg, mode, p) + outside_bytes_per_token(cfg, p))


def peak_bytes(cfg: LlamaConfig, tokens: int, mode: str, p: int = BF16) -> int:
    """saved_bytes plus, under checkpointing, what one block recomputes in backward (its set less what it
    kept; the input it kept is counted in both, an upper bound by ph)."""
    extra = tokens * (block_bytes_per_token(cfg, p) - kept_bytes_per_token(cfg, mode, p) + p * cfg.n_embd)
    extra = extra if mode != "none" else 0
    return saved_bytes(cfg, tokens, mode, p) + extra


@dataclass
class Activations:
    seq_len: int
    micro_batch: int
    checkpointing: str
    gib_per_gpu: float
    formula: str
    flops_per_token: dict[str, int]
    flops_rule: str
    mfu: dict[str, float]
    peak_tflops: float
    peak_source: str

    def to_json(self) -> dict:
        return asdict(self)


def flops_per_token(cfg: LlamaConfig, seq_len: int) -> dict[str, int]:
    n = param_count(cfg)
    embedding = cfg.vocab_size * cfg.n_embd
    attention = 12 * cfg.n_layer * cfg.n_head * cfg.head_dim * seq_len
    return {
        "torchtitan": 6 * (n - embedding) + attention,
        "seed": 6 * n,
        "train.py": 6 * (n if cfg.tie_embeddings else n - embedding),
    }


def activations(
    cfg: LlamaConfig,
    seq_len: int,
    micro_batch: int,
    mode: str,
    tokens_per_gpu_s: float,
    peak_tflops: float | None,
) -> Activations:
    flops = flops_per_token(cfg, seq_len)
    peak = peak_tflops if peak_tflops is not None else H100_PEAK_TFLOPS
    source = "--peak-tflops" if peak_tflops is not None else "H100 SXM dense BF16 (datasheet), as train.py"
    return Activations(
        seq_len=seq_len,
        micro_batch=micro_batch,
        checkpointing=mode,
        gib_per_gpu=peak_bytes(cfg, seq_len * micro_batch, mode) / GIB,
        formula=(
            f"per token: {BLOCK_FORMULA[mode]} + 16 + 4h + 4 + 4h + 4V bytes (bf16); jobs/plan/activations.py"
        ),
        flops_per_token=flops,
        flops_rule="torchtitan: 6 x (parameters - embedding) + 12 x L x H x Q x T",
        mfu={rule: tokens_per_gpu_s * f / (peak * 1e12) for rule, f in flops.items()},
        peak_tflops=peak,
        peak_source=source,
    )


def render(a: Activations, states_gib: float, gpu_gib: float, parallel: str) -> list[str]:
    left = gpu_gib - states_gib - a.gib_per_gpu
    mfu = ", ".join(f"{rule} {v:.1%}" for rule, v in a.mfu.items())
    return [
        f"activations: {a.gib_per_gpu:,.1f} GiB per GPU at sequence {a.seq_len:,} x micro-batch "
        f"{a.micro_batch}, activation checkpointing {a.checkpointing} ({a.formula})",
        f"  {parallel}: model states {states_gib:,.1f} + activations {a.gib_per_gpu:,.1f} GiB of "
        f"{gpu_gib:.1f}: {'fits' if left >= 0 else 'does NOT fit'} ({left:,.1f} GiB left)",
        f"MFU at --tokens-per-gpu-s on {a.peak_tflops:g} TFLOP/s ({a.peak_source}): {mfu}; the rule used: "
        f"{a.flops_rule} (the seed's 40% is 6 x all parameters)",
    ]


def fit(
    memory: object,
    cfg: LlamaConfig,
    model: str,
    seq_len: int,
    micro_batch: int,
    mode: str,
    tokens_per_gpu_s: float,
    peak_tflops: float | None,
) -> tuple[Activations, list[str]]:
    """The activations of `--model` at this sequence and micro-batch on top of the plan's model states
    (`runplan.Memory`): DDP when both fit a GPU, else FSDP, else UsageError with the numbers and the fixes."""
    from jobs.errors import UsageError

    problems = []
    if seq_len < 1:
        problems.append(f"--seq-len {seq_len}: must be at least 1")
    if micro_batch < 1:
        problems.append(f"--micro-batch {micro_batch}: must be at least 1")
    if peak_tflops is not None and not peak_tflops > 0:
        problems.append(f"--peak-tflops {peak_tflops}: must be above 0")
    if problems:
        raise UsageError("; ".join(problems))
    a = activations(cfg, seq_len, micro_batch, mode, tokens_per_gpu_s, peak_tflops)
    gpu = memory.gpu_memory_gib  # type: ignore[attr-defined]
    for parallel, states in (("DDP", memory.ddp_gib_per_gpu), ("FSDP", memory.fsdp_gib_per_gpu)):  # type: ignore[attr-defined]
        if states + a.gib_per_gpu <= gpu:
            return a, render(a, states, gpu, parallel)
    fsdp = memory.fsdp_gib_per_gpu  # type: ignore[attr-defined]
    fixes = "a smaller --micro-batch or --seq-len, or more GPUs (FSDP divides the model states by them)"
    lighter = MODES[MODES.index(mode) + 1 :]
    if lighter:
        gib = {m: peak_bytes(cfg, seq_len * micro_batch, m) / GIB for m in lighter}
        lighter_fixes = " or ".join(f"--activation-checkpointing {m} ({g:,.1f} GiB)" for m, g in gib.items())
        fixes = f"{lighter_fixes}, {fixes}"
    raise UsageError(
        f"--model {model} does not fit: at --seq-len {seq_len} --micro-batch {micro_batch} "
        f"--activation-checkpointing {mode} its activations take {a.gib_per_gpu:,.1f} GiB per GPU on top of "
        f"{fsdp:,.1f} GiB of model states (FSDP over {memory.gpus} GPUs), more than a GPU's {gpu:.1f} GiB; "  # type: ignore[attr-defined]
        f"pass {fixes}"
    )
