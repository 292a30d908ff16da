"""retired() and retirement_date(): date boundaries, regional extensions, the withdrawn preview."""

from __future__ import annotations

import dataclasses
from datetime import date, datetime, timedelta

import pytest

from vmsizes import UnknownSize, lookup, retired, retirement_date

DAY = timedelta(days=1)

# (size, region, retirement date in that region): azure-notes.md section 2.
CASES = [
    ("Standard_NC6s_v3", None, date(2025, 9, 30)),
    ("Standard_NC24rs_v3", "eastus", date(2025, 9, 30)),
    ("Standard_NC6s_v3", "usgovvirginia", date(2026, 12, 31)),
    ("Standard_NC12s_v3", "usgovarizona", date(2026, 12, 31)),
    ("Standard_NC24s_v3", "jioindiawest", date(2027, 6, 30)),
    ("Standard_NC24rs_v3", "chinanorth3", date(2027, 6, 30)),
    ("Standard_NV12s_v3", None, date(2026, 9, 30)),
    ("Standard_NV48s_v3", "uaenorth", date(2027, 1, 31)),
    ("Standard_NV32ms_v3", "uaenorth", date(2027, 1, 31)),
    ("Standard_NV4as_v4", "uaenorth", date(2026, 9, 30)),  # the UAE North extension is NVv3 only
    ("Standard_NC6", None, date(2023, 9, 6)),
    ("Standard_NC24r_Promo", "westeurope", date(2023, 9, 6)),
    ("Standard_HB60rs", None, date(2024, 8, 31)),
    ("Standard_HB120-16rs_v2", None, date(2027, 5, 31)),
    ("Standard_HC44rs", None, date(2027, 5, 31)),
]


@pytest.mark.parametrize(("name", "region", "when"), CASES)
def test_retired_around_the_boundary(name: str, region: str | None, when: date) -> None:
    assert retirement_date(name, region) == when
    assert retired(name, when - DAY, region) is False
    assert retired(name, when, region) is True
    assert retired(name, when + DAY, region) is True


@pytest.mark.parametrize("region", ["US Gov Virginia", "USGOVVIRGINIA", "usgovvirginia"])
def test_region_names_in_any_spelling(region: str) -> None:
    assert retirement_date("Standard_NC6s_v3", region) == date(2026, 12, 31)
    assert not retired("Standard_NC6s_v3", date(2026, 1, 1), region)


def test_regional_retirement_extensions_are_read_in_any_spelling() -> None:
    assert retirement_date("Standard_NC6s_v3", "US Gov Virginia") == date(2026, 12, 31)
    assert retirement_date("Standard_NC6s_v3", "usgovvirginia") == date(2026, 12, 31)
    assert retirement_date("Standard_NC6s_v3", "eastus") == retirement_date("Standard_NC6s_v3")


def test_extensions_are_recorded_per_region() -> None:
    assert lookup("Standard_NC6s_v3").retirement_extensions == {
        "usgovvirginia": date(2026, 12, 31),
        "usgovarizona": date(2026, 12, 31),
        "jioindiawest": date(2027, 6, 30),
        "chinanorth3": date(2027, 6, 30),
    }
    assert lookup("Standard_NV24s_v3").retirement_extensions == {"uaenorth": date(2027, 1, 31)}
    assert lookup("Standard_ND96isr_H100_v5").retirement_extensions == {}


@pytest.mark.parametrize(
    "name",
    ["Standard_ND96isr_H100_v5", "Standard_NC128ds_xl_RTXPRO6000BSE_v6", "Standard_ND96is_noIB_H100_v5"],
)
def test_sizes_without_a_date_are_never_retired(name: str) -> None:
    assert retirement_date(name) is None
    assert retired(name, date(2100, 1, 1)) is False


def test_the_withdrawn_preview_is_retired_on_every_date_without_a_date() -> None:
    assert retirement_date("Standard_ND40s_v2") is None
    assert lookup("Standard_ND40s_v2").withdrawn
    for day in (date(2000, 1, 1), date(2026, 11, 30), date(2100, 1, 1)):
        assert retired("Standard_ND40s_v2", day)
        assert retired("standard_nd40s_v2", day, "eastus")
    assert [size for size in ("Standard_ND40rs_v2",) if lookup(size).withdrawn] == []


def test_retirement_follows_the_date_not_the_status_text() -> None:
    base = lookup("Standard_NC6s_v3")
    says_retired_no_date = dataclasses.replace(
        base, status="retired", retirement_date=None, retirement_extensions={}
    )
    assert retired(says_retired_no_date, date(2030, 1, 1)) is False
    says_current_dated = dataclasses.replace(
        lookup("Standard_ND96isr_H100_v5"), retirement_date=date(2020, 1, 1)
    )
    assert says_current_dated.status == "current"
    assert retired(says_current_dated, date(2020, 1, 1)) is True
    # Announced on the snapshot (status text) yet past its date now: retired.
    announced = lookup("Standard_NV12s_v3")
    assert announced.status == "retirement announced"
    assert retired(announced, date(2026, 10, 1)) is True


def test_accepts_a_datetime_and_rejects_other_types() -> None:
    assert retired("Standard_NC6s_v3", datetime(2025, 9, 30, 0, 0)) is True
    assert retired("Standard_NC6s_v3", datetime(2025, 9, 29, 23, 59)) is False
    with pytest.raises(TypeError, match="'on' must be a datetime.date"):
        retired("Standard_NC6s_v3", "2025-09-30")  # type: ignore[arg-type]


def test_unknown_names_raise_unknown_size() -> None:
    with pytest.raises(UnknownSize, match="'Standard_Foo'"):
        retired("Standard_Foo", date(2026, 1, 1))
    with pytest.raises(UnknownSize, match="'ND96'"):
        retirement_date("ND96")
