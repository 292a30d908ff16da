#!/usr/bin/env bash
# One prepared GPU benchmark for jobs/payload: train.py tokens/s per GPU and MFU for the Llama 1B preset with
# DDP and with FSDP2 (target MFU >= 45% in bf16), the smoke all-reduce busbw, and the CUDA checkpoint/resume
# path (torch.distributed.checkpoint step folders).
# Results land under $OUT (default ./gpu-bench-out): results.json plus every log.
#
#   OUT=/tmp/out bash bench/gpu_train_smoke.sh            # on a machine with NVIDIA GPUs and CUDA torch
#   PYTHON=.venv/bin/python BATCH=8 STEPS=40 bash bench/gpu_train_smoke.sh
#
# Method. All GPUs of the machine, one process each, under torchrun --standalone (train.py and smoke.py
# read the same variables Azure ML sets). Model: `--model 1B` (meta-llama/Llama-3.2-1B's config.json,
# jobs/payload/llamaconfig.py), block 2048, bf16, fused AdamW, torch.compile, synthetic tokens, once with
# `--parallel ddp` and once with `--parallel fsdp`. MFU = 6 x params x tokens/s / peak bf16 dense FLOP/s of
# the detected GPU (train.py's table; attention FLOPs not counted, so it is conservative).
# tokens/s and MFU are taken from the last log interval (the first includes compilation).
# busbw follows nccl-tests (busbw = algbw x 2(n-1)/n): with one GPU it is 0 by definition, so on a
# single-GPU machine the smoke run checks NCCL start-up and the world size, not a link.
# Issue 34's FSDP measurements, --parallel fsdp on the same 1B model and compile:
#  - gradient memory with --grad-accum 4: train.py's "peak GPU memory allocated" (torch.cuda.max_memory_allocated,
#    rank 0) with --fsdp-grad-sync every (reduce-scatter each micro-step, the default) and last (the old
#    behaviour: unsharded fp32 gradients held between micro-steps). Expected difference per GPU: about
#    4 x params x (1 - 1/GPUs) bytes (the accumulation is fp32 either way; on one GPU the shard is the whole).
#  - tokens/s and MFU with --activation-checkpointing none, selective and full (batch $AC_BATCH x 2048).
# Budget: about 10 minutes on one H100/H200 (compile ~1-2 min per run, 60 steps each, smoke, checkpoint).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-./gpu-bench-out}
BATCH=${BATCH:-16}
STEPS=${STEPS:-60}
AC_BATCH=${AC_BATCH:-8}
mkdir -p "$OUT"

"$PY" - <<'EOF' > "$OUT/env.txt"
import torch
assert torch.cuda.is_available(), "no CUDA device visible to torch: this benchmark needs a GPU machine"
print("torch", torch.__version__, "cuda", torch.version.cuda)
for i in range(torch.cuda.device_count()):
    print(i, torch.cuda.get_device_name(i))
EOF
cat "$OUT/env.txt"
NGPU=$("$PY" -c "import torch; print(torch.cuda.device_count())")
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || true
RUN=("$PY" -m torch.distributed.run --standalone --nproc-per-node "$NGPU")

echo "== smoke: $NGPU GPU(s), all-reduce sweep up to 1 GiB"
NCCL_DEBUG=INFO "${RUN[@]}" jobs/payload/smoke.py --expect-world-size "$NGPU" > "$OUT/smoke.log" 2>&1
grep -E "^(world size|smoke peak busbw)" "$OUT/smoke.log"

for PAR in ddp fsdp; do
  echo "== train: Llama 1B, --parallel $PAR, batch $BATCH x 2048 tokens per GPU, $STEPS steps, bf16, torch.compile"
  "${RUN[@]}" jobs/payload/train.py --model 1B --parallel "$PAR" --block-size 2048 \
    --batch-size "$BATCH" --steps "$STEPS" --log-every 10 --warmup 10 --lr 3e-4 --compile \
    > "$OUT/train-$PAR.log" 2>&1
  grep -E "^(model|step|final)" "$OUT/train-$PAR.log"
done

for SYNC in every last; do
  echo "== train: Llama 1B, fsdp, --grad-accum 4 --fsdp-grad-sync $SYNC, batch 4 x 2048, 20 steps: peak memory"
  "${RUN[@]}" jobs/payload/train.py --model 1B --parallel fsdp --block-size 2048 --batch-size 4 --grad-accum 4 \
    --fsdp-grad-sync "$SYNC" --steps 20 --log-every 10 --warmup 5 --lr 3e-4 --compile \
    > "$OUT/train-accum-$SYNC.log" 2>&1
  grep -E "^(model|step|peak|final)" "$OUT/train-accum-$SYNC.log"
done

for AC in none selective full; do
  echo "== train: Llama 1B, fsdp, --activation-checkpointing $AC, batch $AC_BATCH x 2048, $STEPS steps"
  "${RUN[@]}" jobs/payload/train.py --model 1B --parallel fsdp --block-size 2048 --batch-size "$AC_BATCH" \
    --activation-checkpointing "$AC" --steps "$STEPS" --log-every 10 --warmup 10 --lr 3e-4 --compile \
    > "$OUT/train-ac-$AC.log" 2>&1
  grep -E "^(model|step|peak|final)" "$OUT/train-ac-$AC.log"
done

echo "== checkpoint + resume on CUDA (DCP async save, commit marker), tiny model"
CKPT=$(mktemp -d)
"${RUN[@]}" jobs/payload/train.py --model tiny --steps 30 --ckpt "$CKPT" --ckpt-every 10 --log-every 10 \
  > "$OUT/ckpt_run1.log" 2>&1
rm -rf "$CKPT"/step_00000030   # as if the job had died after step 20's checkpoint
"${RUN[@]}" jobs/payload/train.py --model tiny --steps 30 --ckpt "$CKPT" --ckpt-every 10 --log-every 10 \
  > "$OUT/ckpt_run2.log" 2>&1
grep -E "resumed from .* at step 20" "$OUT/ckpt_run2.log"
rm -rf "$CKPT"

"$PY" - "$OUT" "$NGPU" <<'EOF'
import json, re, sys
sys.path.insert(0, "jobs/payload")
from metrics import StepMetrics  # train.py's metrics record (docs/job-scripts.md "Metrics record")
out, ngpu = sys.argv[1], int(sys.argv[2])
smoke = open(f"{out}/smoke.log").read()
transport = re.findall(r"Using network (\w+)", smoke)
result = {
    "gpus": ngpu,
    "smoke_world_size": int(re.search(r"^world size (\d+)$", smoke, re.M).group(1)),
    "smoke_peak_busbw_gbytes_per_s": float(re.search(r"^smoke peak busbw: ([\d.]+) GB/s$", smoke, re.M).group(1)),
    "nccl_network": sorted(set(transport)),
    "mfu_target": 0.45,
    "checkpoint_resume_ok": True,
}
for par in ("ddp", "fsdp"):
    train = open(f"{out}/train-{par}.log").read()
    last = [r for line in train.splitlines() if (r := StepMetrics.from_line(line))][-1]
    model = re.search(r"^model ([\d.]+)M params .* peak (.*)$", train, re.M)
    result[par] = {
        "params_m": float(model.group(1)),
        "peak_source": model.group(2),
        "step": last.step,
        "loss": last.loss,
        "ms_per_step": last.step_ms,
        "tokens_per_s_per_gpu": last.tokens_per_s_per_gpu,
        "mfu": last.mfu,
        "mfu_meets_target": last.mfu is not None and last.mfu >= 0.45,
    }
def run_numbers(log_name):
    text = open(f"{out}/{log_name}").read()
    last = [r for line in text.splitlines() if (r := StepMetrics.from_line(line))][-1]
    peak = re.search(r"^peak GPU memory allocated: ([\d.]+) GiB", text, re.M)
    return {
        "tokens_per_s_per_gpu": last.tokens_per_s_per_gpu,
        "mfu": last.mfu,
        "ms_per_step": last.step_ms,
        "peak_gib_rank0": float(peak.group(1)) if peak else None,
    }
result["fsdp_grad_accum_4"] = {s: run_numbers(f"train-accum-{s}.log") for s in ("every", "last")}
result["fsdp_activation_checkpointing"] = {ac: run_numbers(f"train-ac-{ac}.log") for ac in ("none", "selective", "full")}
json.dump(result, open(f"{out}/results.json", "w"), indent=2)
print(json.dumps(result, indent=2))
EOF
