"""`python -m jobs prices`: --refresh writes the price file from the API (the recorded pages), without it the
file's summary; the flags it refuses, all at once, exit 2; a failed query exit 4."""

from __future__ import annotations

import json

import pytest

from jobs.cli import main
from jobs.prices import retailprices
from vmsizes import prices

from .jobs_util import FIXTURES

PAGES = FIXTURES / "retail-prices"


@pytest.fixture
def api(monkeypatch):
    page1 = json.loads((PAGES / "page-1.json").read_text())
    page2 = json.loads((PAGES / "page-2.json").read_text())
    asked: list[str] = []

    def get(url: str) -> dict:
        asked.append(url)
        return page2 if url == page1["NextPageLink"] else page1

    monkeypatch.setattr(retailprices, "get_json", get)
    monkeypatch.delenv(prices.ENV, raising=False)
    return asked


def test_refresh_writes_the_file_and_says_so(api, tmp_path, capsys):
    out = tmp_path / "prices.json"
    assert main(["prices", "--refresh", "--region", "East US", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["file"] == str(out) and summary["refreshed"] is True
    assert summary["currency"] == "USD" and summary["regions"] == 2 and summary["sizes"] == 3
    written = prices.load(out)
    assert written.price("Standard_ND96isr_H100_v5", "eastus", "dedicated") == 98.32
    # One region asked: eastus, in every chunk's filter.
    assert all("armRegionName%20eq%20%27eastus%27" in url for url in api if "skip" not in url)


def test_without_refresh_reads_the_file_named_by_the_environment(api, tmp_path, capsys, monkeypatch):
    out = tmp_path / "prices.json"
    main(["prices", "--refresh", "--out", str(out)])
    capsys.readouterr()
    monkeypatch.setenv(prices.ENV, str(out))
    assert main(["prices"]) == 0
    text = capsys.readouterr().out
    assert f"read {out}: 3 GPU sizes in 2 regions; prices in USD from the Azure Retail Prices API" in text
    assert f"refresh with `python -m jobs prices --refresh --out {out}`" in text


def test_bad_flags_are_refused_at_once(api, capsys):
    assert main(["prices", "--region", "eastuss", "--json"]) == 2
    err = json.loads(capsys.readouterr().out)["error"]
    assert "--region eastuss: not a known Azure region; did you mean eastus?" in err
    assert "--region chooses what --refresh fetches; pass --refresh too" in err
    assert "no price file named: pass --out FILE or set AZML_GPU_PRICES" in err


def test_a_missing_file_is_bad_input(api, tmp_path, capsys):
    assert main(["prices", "--out", str(tmp_path / "none.json")]) == 2
    assert "not found; write it with `python -m jobs prices --refresh" in capsys.readouterr().err


def test_a_failed_query_is_exit_4(api, tmp_path, monkeypatch, capsys):
    def down(url: str) -> dict:
        raise OSError("network is unreachable")

    monkeypatch.setattr(retailprices, "get_json", down)
    assert main(["prices", "--refresh", "--out", str(tmp_path / "p.json"), "--json"]) == 4
    assert (
        "Retail Prices query failed: OSError: network is unreachable"
        in json.loads(capsys.readouterr().out)["error"]
    )
    assert not (tmp_path / "p.json").exists()
