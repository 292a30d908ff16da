"""The naming parser: a table of real names, bad names, and agreement with the catalog for every entry."""

from __future__ import annotations

import pytest

from vmsizes import UnknownSize, all_sizes, lookup, parse_name
from vmsizes.rdma_exceptions import NON_SRIOV_RDMA_SIZES

# name -> (letters, vcpus, constrained, features, accelerator, version, promo, extras, rdma)
TABLE = {
    "Standard_HB120-16rs_v3": ("HB", 120, 16, "rs", None, "v3", False, (), True),
    "Standard_ND96isr_H100_v5": ("ND", 96, None, "isr", "H100", "v5", False, (), True),
    "Standard_ND128isrG5_GB300_v6": ("ND", 128, None, "isr", "GB300", "v6", False, ("G5",), True),
    "Standard_ND128isr_NDR_GB200_v6": ("ND", 128, None, "isr", "GB200", "v6", False, ("NDR",), True),
    "Standard_NC128ds_xl_RTXPRO6000BSE_v6": (
        "NC",
        128,
        None,
        "ds",
        "RTXPRO6000BSE",
        "v6",
        False,
        ("xl",),
        False,
    ),
    "Standard_NC24r_Promo": ("NC", 24, None, "r", None, None, True, (), True),
    "Standard_NV4as_v4": ("NV", 4, None, "as", None, "v4", False, (), False),
    "Standard_NC4as_T4_v3": ("NC", 4, None, "as", "T4", "v3", False, (), False),
    "Standard_M128": ("M", 128, None, "", None, None, False, (), False),
    "Standard_E64-32s_v5": ("E", 64, 32, "s", None, "v5", False, (), False),
    "Standard_NV4ads_V710_v5": ("NV", 4, None, "ads", "V710", "v5", False, (), False),
    "Standard_ND96isr_MI300X_v5": ("ND", 96, None, "isr", "MI300X", "v5", False, (), True),
    "Standard_NCC40ads_H100_v5": ("NCC", 40, None, "ads", "H100", "v5", False, (), False),
    "Standard_NV12hs_v3": ("NV", 12, None, "hs", None, "v3", False, (), False),
    "Standard_HB60rs": ("HB", 60, None, "rs", None, None, False, (), True),
    "Standard_NC6_Promo": ("NC", 6, None, "", None, None, True, (), False),
    "Standard_ND96is_noIB_H100_v5": ("ND", 96, None, "is", "H100", "v5", False, ("noIB",), False),
    "Standard_HB368-336rs_v5": ("HB", 368, 336, "rs", None, "v5", False, (), True),
    "Standard_DS2_v2_Promo": ("DS", 2, None, "", None, "v2", True, (), False),
}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_parse_known_shapes(name: str) -> None:
    letters, vcpus, constrained, features, accelerator, version, promo, extras, rdma = TABLE[name]
    parsed = parse_name(name)
    assert (parsed.letters, parsed.vcpus, parsed.constrained_vcpus, parsed.features) == (
        letters,
        vcpus,
        constrained,
        features,
    )
    assert (parsed.accelerator, parsed.version, parsed.promo, parsed.extras) == (
        accelerator,
        version,
        promo,
        extras,
    )
    assert parsed.rdma is rdma
    assert parsed.active_vcpus == (constrained or vcpus)
    assert parsed.canonical == name


def test_feature_booleans() -> None:
    nv = parse_name("Standard_NV4as_v4")
    assert nv.amd_cpu and nv.premium_storage and not nv.local_disk and not nv.arm_cpu and not nv.isolated
    nd = parse_name("Standard_ND96isr_H100_v5")
    assert nd.isolated and nd.rdma and not nd.amd_cpu
    assert parse_name("Standard_D4pds_v5").arm_cpu
    assert parse_name("Standard_M48ds_1_v3").memory_capacity == "1"


def test_upper_case_inside_the_accelerator_never_counts_as_a_feature() -> None:
    # RTXPRO has an R, NDR has an R: neither makes the size RDMA (azure-notes.md 1.2).
    assert not parse_name("Standard_NC128ds_xl_RTXPRO6000BSE_v6").rdma
    assert "r" not in parse_name("Standard_NC256lds_xl_RTXPRO6000BSE_v6").features


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("standard_nd96isr_h100_v5", "Standard_ND96isr_H100_v5"),
        ("STANDARD_ND96ISR_H100_V5", "Standard_ND96isr_H100_v5"),
        ("standard_nd128isrg5_gb300_v6", "Standard_ND128isrG5_GB300_v6"),
        ("standard_nc128ds_xl_rtxpro6000bse_v6", "Standard_NC128ds_xl_RTXPRO6000BSE_v6"),
        ("standard_nv4ads_v710_v5", "Standard_NV4ads_V710_v5"),
        ("standard_nc24r_promo", "Standard_NC24r_Promo"),
        ("Standard_ND96ISR_H100_v5", "Standard_ND96isr_H100_v5"),  # features typed in upper case
        ("Standard_nc24RS_v3", "Standard_NC24rs_v3"),
    ],
)
def test_names_in_other_casings_parse_to_the_canonical_spelling(given: str, canonical: str) -> None:
    parsed = parse_name(given)
    assert parsed.canonical == canonical
    assert parsed.rdma is parse_name(canonical).rdma
    assert parsed.features == parse_name(canonical).features


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("Standard_Foo", "family letters followed by the vCPU count"),
        ("ND96", "must start with 'Standard_' (did you mean 'Standard_ND96'?)"),
        ("", "empty"),
        ("   ", "empty"),
        (" Standard_NC6", "spaces"),
        ("Standard_HB368_336rsv5", "unexpected part '336rsv5'"),
        ("Standard_ND96isr_v5_H100", "version"),
        ("Standard_E64-64s_v5", "active vCPU count"),
        ("Standard_E64-0s_v5", "active vCPU count"),
        ("Standard_NC0", "positive"),
        ("Standard_NC6__v3", "empty part"),
        ("Standard_NC6_Promo_v3", "'Promo' must be the last part"),
        ("Standard_NC6_v3_v3", "repeats"),
        ("Standard_NC6s-v3", "unexpected text"),
    ],
)
def test_names_off_the_convention_raise_unknown_size(name: str, reason: str) -> None:
    with pytest.raises(UnknownSize) as caught:
        parse_name(name)
    message = str(caught.value)
    assert reason in message
    assert repr(name) in message
    assert "Standard_ND96isr_H100_v5" in message  # says what a valid name looks like
    assert isinstance(caught.value, ValueError)  # the contract: parse_name raises ValueError


def test_non_string_is_unknown_size() -> None:
    with pytest.raises(UnknownSize, match="expected a string, got NoneType"):
        parse_name(None)  # type: ignore[arg-type]


CATALOG = [size.name for size in all_sizes()]


@pytest.mark.parametrize("name", CATALOG)
def test_parser_agrees_with_the_catalog(name: str) -> None:
    """THE key check: RDMA, RDMA usability and vCPUs from the name match the catalog for every entry."""
    size = lookup(name)
    parsed = parse_name(name)
    assert parsed.canonical == name
    assert parsed.rdma is size.rdma, "every catalog size follows the 'r' rule (azure-notes.md 1.3 item 5)"
    if name.lower() in NON_SRIOV_RDMA_SIZES:
        assert parsed.rdma and not size.rdma_usable
    else:
        assert size.rdma_usable is parsed.rdma
    if size.vcpus is not None:
        assert parsed.active_vcpus == size.vcpus
    if size.base_size is not None:
        assert parsed.constrained
        base = lookup(size.base_size)
        assert base is not None and base.vcpus == parsed.vcpus
    else:
        assert not parsed.constrained


@pytest.mark.parametrize("name", CATALOG)
def test_every_catalog_name_survives_any_case(name: str) -> None:
    assert parse_name(name.lower()).canonical == name
    assert parse_name(name.upper()).canonical == name
    assert parse_name(name.lower()).rdma is parse_name(name).rdma
