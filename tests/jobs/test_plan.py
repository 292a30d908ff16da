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


# The price file: the recorded Retail Prices pages' illustrative prices (tests/jobs/fixtures/retail-prices):
# ND96isr H100 v5 in eastus 98.32 pay-as-you-go; NC24ads A100 v4 3.673 pay-as-you-go, 0.7346 Low Priority.
SEED = ["plan", "--tokens", "2.0e9", "--tokens-per-gpu-s", "8200", "--gpus", "16", "--goodput", "0.85"]


@pytest.fixture
def price_file(tmp_path, monkeypatch):
    from jobs.prices import retailprices
    from vmsizes import prices

    from .jobs_util import FIXTURES

    pages = {
        n: json.loads((FIXTURES / "retail-prices" / n).read_text()) for n in ("page-1.json", "page-2.json")
    }

    def get(url: str) -> dict:
        return pages["page-2.json"] if url == pages["page-1.json"]["NextPageLink"] else pages["page-1.json"]

    path = tmp_path / "prices.json"
    prices.dump(retailprices.fetch(prices.gpu_size_names(), ["eastus"], get=get), path)
    monkeypatch.delenv(prices.ENV, raising=False)
    return str(path)


def test_seed_run_costs_from_the_price_file_dedicated(capsys, price_file):
    argv = [*SEED, "--size", "Standard_ND96isr_H100_v5", "--region", "eastus", "--prices", price_file]
    assert main([*argv, "--json"]) == 0
    p = json.loads(capsys.readouterr().out)
    assert round(p["hours"], 1) == 5.0
    assert p["price_per_node_hour"] == 98.32 and p["currency"] == "USD"
    assert p["cost"] == pytest.approx(2 * 2.0e9 / (8200 * 16 * 0.85) / 3600 * 98.32)  # 979.60
    assert p["price_per_useful_node_hour"] == pytest.approx(98.32 / 0.85)  # 115.67
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert (
        "cost: 979.60 USD at 98.32 USD per node-hour (dedicated; prices in USD from the Azure Retail" in text
    )
    assert "price per useful node-hour: 115.67 USD (goodput 0.85)" in text


def test_low_priority_from_the_same_file_with_the_restart_tax(capsys, price_file, monkeypatch):
    from vmsizes import prices

    monkeypatch.setenv(prices.ENV, price_file)  # the file found through the environment this time
    argv = [*SEED, "--gpus", "1", "--size", "Standard_NC24ads_A100_v4", "--region", "eastus"]
    extra = [
        "--tier",
        "low-priority",
        "--preemptions-per-node-hour",
        "0.1",
        "--checkpoint-interval-minutes",
        "30",
    ]
    assert main([*argv, *extra, "--restart-minutes", "6", "--json"]) == 0
    p = json.loads(capsys.readouterr().out)
    hours = 2.0e9 / (8200 * 1 * 0.85) / 3600  # 79.71 h on 1 node
    lost = 0.1 * (15 + 6) / 60  # 1 node x 0.1/h x (half of 30 min + 6 min) = 3.5%
    assert p["tier"] == "low_priority" and p["price_per_node_hour"] == 0.7346
    assert p["restart_tax"]["lost_fraction"] == pytest.approx(lost)
    assert p["restart_tax"]["wall_hours"] == pytest.approx(hours / (1 - lost))
    assert p["cost"] == pytest.approx(hours / (1 - lost) * 0.7346)
    assert p["price_per_useful_node_hour"] == pytest.approx(0.7346 / (0.85 * (1 - lost)))
    assert p["dedicated_price_per_useful_node_hour"] == pytest.approx(3.673 / 0.85)
    assert main([*argv, *extra, "--restart-minutes", "6"]) == 0
    text = capsys.readouterr().out
    assert (
        "restart tax (assumption: 0.1 preemptions per node-hour, yours): 1 node(s) -> 0.1 job restarts"
        in text
    )
    assert (
        "price per useful node-hour: 0.90 USD (goodput 0.85, restart tax 3.5%); dedicated: 4.32 USD" in text
    )


def test_a_multi_node_job_is_preempted_by_any_node(capsys, price_file):
    argv = [*SEED, "--size", "Standard_NC24ads_A100_v4", "--region", "eastus", "--prices", price_file]
    for gpus, nodes in (("1", 1), ("4", 4)):
        main(
            [
                *argv,
                "--gpus",
                gpus,
                "--tier",
                "low-priority",
                "--preemptions-per-node-hour",
                "0.1",
                "--checkpoint-interval-minutes",
                "30",
                "--json",
            ]
        )
        tax = json.loads(capsys.readouterr().out)["restart_tax"]
        assert tax["job_preemptions_per_hour"] == pytest.approx(0.1 * nodes)
        assert tax["lost_fraction"] == pytest.approx(0.1 * nodes * 15 / 60)


def test_price_unknown_is_said_never_zero(capsys, price_file):
    # The file has no Low Priority meter for the H100, and nothing for westus2.
    for extra in (["--tier", "low-priority"], ["--region", "westus2"]):
        argv = [*SEED, "--size", "Standard_ND96isr_H100_v5", "--region", "eastus", "--prices", price_file]
        assert main([*argv, *extra, "--json"]) == 0
        p = json.loads(capsys.readouterr().out)
        assert p["cost"] is None and p["price_per_node_hour"] is None
        assert any(n.startswith("price unknown: the price file gives no") for n in p["notes"])
    assert main([*SEED, "--size", "Standard_ND96isr_H100_v5", "--region", "eastus"]) == 0
    assert (
        "price unknown: no price file (pass --prices FILE or set AZML_GPU_PRICES" in capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--preemptions-per-node-hour", "0.1"],
            "--preemptions-per-node-hour is the preemption rate of low-priority",
        ),
        (["--tier", "spot", "--preemptions-per-node-hour", "0.1"], "needs the checkpoint interval"),
        (
            ["--tier", "spot", "--preemptions-per-node-hour", "-1"],
            "--preemptions-per-node-hour -1: must not be negative",
        ),
        (
            ["--tier", "spot", "--preemptions-per-node-hour", "2", "--checkpoint-interval-minutes", "60"],
            "loses 200% of the time to restarts: the run never ends",
        ),
        (["--prices", "/nonexistent/p.json"], "--prices: price file /nonexistent/p.json: not found"),
    ],
)
def test_cost_flags_refused(capsys, extra, message):
    assert main([*SEED, "--size", "Standard_ND96isr_H100_v5", "--region", "eastus", *extra]) == 2
    assert message in capsys.readouterr().err
