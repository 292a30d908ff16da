"""`python -m jobs plan`: the seed's worked example (hours, nodes, quota, cost, the Young/Daly checkpoint
interval) and its text, whether the model fits (DDP or FSDP), and the flags it refuses."""

from __future__ import annotations

import json

import pytest

from jobs.cli import main


def test_seed_worked_example(capsys):
    assert (
        main(
            [
                "plan",
                "--tokens",
                "2.0e9",
                "--tokens-per-gpu-s",
                "8200",
                "--gpus",
                "16",
                "--goodput",
                "0.85",
                "--size",
                "Standard_ND96isr_H100_v5",
                "--region",
                "eastus",
                "--json",
            ]
        )
        == 0
    )
    p = json.loads(capsys.readouterr().out)
    assert round(p["hours"], 1) == 5.0
    assert p["nodes"] == 2
    family = [q for q in p["quota"] if q["kind"] == "family"]
    assert family == [
        {
            "region": "eastus",
            "kind": "family",
            "family": "standardNDSH100v5Family",
            "pool": "standardNDSH100v5Family",
            "vcpus": 192,
        }
    ]
    assert [q["vcpus"] for q in p["quota"] if q["kind"] == "regional-total"] == [192]


def test_text_output_names_hours_nodes_and_quota(capsys):
    main(
        [
            "plan",
            "--tokens",
            "2e9",
            "--tokens-per-gpu-s",
            "8200",
            "--gpus",
            "16",
            "--size",
            "Standard_ND96isr_H100_v5",
            "--price-per-node-hour",
            "100",
        ]
    )
    out = capsys.readouterr().out
    assert (
        "goodput 0.85: 5.0 hours (4.98 h, 79.7 GPU-hours)" in out
        and "2 x Standard_ND96isr_H100_v5 (8 GPUs each): 9.96 node-hours" in out
        and "192 vCPUs of standardNDSH100v5Family" in out
    )
    assert "cost: 996.33" in out  # 2 nodes x 4.9816 h x 100


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--tokens", "0", "--tokens-per-gpu-s", "1", "--gpus", "1"], "--tokens 0"),
        (["--tokens", "1", "--tokens-per-gpu-s", "1", "--gpus", "0"], "--gpus 0"),
        (["--tokens", "1", "--tokens-per-gpu-s", "1", "--gpus", "1", "--goodput", "1.5"], "--goodput 1.5"),
        (
            ["--tokens", "1", "--tokens-per-gpu-s", "1", "--gpus", "1", "--checkpoint-seconds", "60"],
            "--checkpoint-seconds and --mtbf-hours go together",
        ),
        (["--tokens", "1", "--tokens-per-gpu-s", "1", "--gpus", "1", "--size", "Standard_Nope_v9"], "--size"),
        (
            ["--tokens", "1", "--tokens-per-gpu-s", "1", "--gpus", "1", "--size", "Standard_NV12hs_v3"],
            "--size 'Standard_NV12hs_v3' is in the size catalog without a GPU count",
        ),
        (
            ["--tokens", "1", "--tokens-per-gpu-s", "1", "--gpus", "1", "--price-per-node-hour", "3"],
            "--price-per-node-hour needs --size",
        ),
    ],
)
def test_plan_bad_input_exits_2(capsys, argv, flag):
    assert main(["plan", *argv]) == 2
    assert flag in capsys.readouterr().err


BASE = ["--tokens", "1e9", "--tokens-per-gpu-s", "8200", "--gpus", "16"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--tokens", "nan"], "--tokens nan: not a finite number"),
        (["--tokens-per-gpu-s", "inf"], "--tokens-per-gpu-s inf: not a finite number"),
        (["--goodput", "nan"], "--goodput nan: not a finite number"),
        (["--size", "Standard_ND96isr_H100_v5", "--price-per-node-hour", "inf"], "--price-per-node-hour inf"),
        (["--checkpoint-seconds", "nan", "--mtbf-hours", "24"], "--checkpoint-seconds nan: not a finite"),
        (["--region", "westeurop"], "--region westeurop: not a known Azure region; did you mean westeurope?"),
        (
            ["--checkpoint-seconds", "86400", "--mtbf-hours", "1"],
            "--checkpoint-seconds 86400 is not below --mtbf-hours 1 (3600 s)",
        ),
    ],
)
def test_plan_refuses_non_finite_unknown_regions_and_impossible_checkpoints(capsys, extra, message):
    assert main(["plan", *BASE, *extra]) == 2  # later flags win over BASE's
    assert message in capsys.readouterr().err


def test_plan_region_display_name_is_normalised(capsys):
    argv = ["plan", *BASE, "--size", "Standard_ND96isr_H100_v5", "--region", "East US", "--json"]
    assert main(argv) == 0
    p = json.loads(capsys.readouterr().out)
    assert p["region"] == "eastus" and {q["region"] for q in p["quota"]} == {"eastus"}


def test_text_node_hours_times_price_reads_as_the_cost(capsys):
    argv = [
        "plan",
        "--tokens",
        "2.0e9",
        "--tokens-per-gpu-s",
        "8200",
        "--gpus",
        "16",
        "--size",
        "Standard_ND96isr_H100_v5",
        "--price-per-node-hour",
        "98.32",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    node_hours = float(out.split(" node-hours")[0].rsplit(" ", 1)[-1])
    cost = float(out.split("cost: ")[1].split(" ")[0].replace(",", ""))
    assert node_hours == 9.96 and cost == 979.60
    assert abs(node_hours * 98.32 - cost) < 98.32 * 0.005  # agree to the printed precision


def test_plan_on_a_retired_size_says_it_cannot_be_provisioned(capsys):
    argv = ["plan", "--tokens", "2e9", "--tokens-per-gpu-s", "8200", "--gpus", "16"]
    assert main([*argv, "--size", "Standard_NC24s_v3"]) == 0
    out = capsys.readouterr().out
    assert "Standard_NC24s_v3 is retired since 2025-09-30: it cannot be provisioned" in out


# ----------------------------------------------------------------------------- memory: does the model fit
#: Llama 3.1 8B's parameters (meta-llama/Llama-3.1-8B: bf16 safetensors of 16,060,522,496 bytes).
LLAMA_8B = 16_060_522_496 // 2


#: An H100 (ND H100 v5) as the catalog states it: 80 GB (10^9 bytes) per GPU, in GiB.
H100_GIB = 80e9 / 2**30


def seed_plan(capsys, *extra: str) -> dict:
    argv = ["plan", "--tokens", "2.0e9", "--tokens-per-gpu-s", "8200", "--gpus", "16"]
    assert main([*argv, "--size", "Standard_ND96isr_H100_v5", *extra, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["memory"]


def test_seed_example_8b_does_not_fit_ddp_and_fits_fsdp_over_16_gpus(capsys):
    """ZeRO's 16 bytes per parameter: 8.03e9 x 16 = 119.7 GiB per GPU replicated, 7.5 GiB over 16."""
    m = seed_plan(capsys, "--model", "8B")
    assert m["params"] == LLAMA_8B and m["bytes_per_param"] == 16 and "ZeRO" in m["bytes_source"]
    assert m["gpu_memory_gib"] == pytest.approx(H100_GIB)
    assert m["ddp_gib_per_gpu"] == pytest.approx(LLAMA_8B * 16 / 2**30) == pytest.approx(119.66, abs=0.01)
    assert m["fsdp_gib_per_gpu"] == pytest.approx(LLAMA_8B * 16 / 2**30 / 16)
    assert (m["fits_ddp"], m["fits_fsdp"], m["use"]) == (False, True, "fsdp")
    assert seed_plan(capsys, "--params", str(LLAMA_8B)) == m


def test_the_text_says_which_does_not_fit_and_which_to_use(capsys):
    argv = ["plan", "--tokens", "2e9", "--tokens-per-gpu-s", "8200", "--gpus", "16"]
    assert main([*argv, "--size", "Standard_ND96isr_H100_v5", "--model", "8B"]) == 0
    out = capsys.readouterr().out
    assert "8,030,261,248 parameters x 16 bytes of model state" in out
    assert "DDP:  119.7 GiB per GPU: does NOT fit in 74.5 GiB" in out
    assert "FSDP over 16 GPUs: 7.5 GiB per GPU: fits (67.0 GiB left for activations)" in out
    assert "use FSDP (--parallel fsdp)" in out


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--model", "8B", "--params", "8e9"], "--model and --params both give the model's size; pass one"),
        (["--model", "9B"], "--model 9B: not a preset; choose one of"),
        (["--params", "0"], "--params 0: must be at least 1"),
        (["--params", "nan"], "--params nan: not a finite number"),
        (["--gpu-memory-gib", "80"], "--gpu-memory-gib needs --model or --params"),
        (["--params", "8e9", "--gpu-memory-gib", "0"], "--gpu-memory-gib 0.0: must be above 0"),
        (["--model", "8B"], "--model/--params needs --size or --gpu-memory-gib"),
    ],
)
def test_memory_flags_name_the_problem(capsys, extra, needle):
    argv = ["plan", "--tokens", "2e9", "--tokens-per-gpu-s", "8200", "--gpus", "16"]
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
