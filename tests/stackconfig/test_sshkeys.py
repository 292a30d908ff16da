"""stackconfig/sshkeys.py: the SSH public key check. Azure ML takes RSA keys of 2048 bits and more
(machine-learning-enable-ssh.md, "starting with ssh-rsa"); well-formed keys of other types are refused naming
the source and the fix. Key bodies truncated or malformed as OpenSSH writes them (RFC 4251 §5 strings: a
uint32 length, then that many bytes; RFC 4253 §6.6 ssh-rsa: string "ssh-rsa", mpint e, mpint n) get the config
error naming the problem, never a traceback; the key type string is at most 64 characters (RFC 4250 §4.6.1:
"Names MUST NOT be longer than 64 characters"); the line is taken as users paste it (with or without the
comment `ssh-keygen` appends)."""

from __future__ import annotations

import base64
import os
import struct
from pathlib import Path

import pytest
from pydantic import ValidationError

from stackconfig import SshConfig
from stackconfig.sshkeys import public_key_problem, rsa_bits

KEYS = Path(__file__).resolve().parent.parent / "fixtures" / "sshkeys"
RSA3072 = (KEYS / "rsa3072.pub").read_text().strip()
NOT_OPENSSH = "the key body is not an OpenSSH public key"


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _line(body: bytes, key_type: str = "ssh-rsa") -> str:
    return f"{key_type} {base64.b64encode(body).decode()} test@host"


def _real_body() -> bytes:
    return base64.b64decode(RSA3072.split()[1])


def test_the_fixture_key_line_is_accepted_with_and_without_its_comment() -> None:
    key_type, body, _comment = RSA3072.split()
    assert public_key_problem(RSA3072) is None
    assert public_key_problem(f"{key_type} {body}") is None  # no comment: still 3072 bits
    assert rsa_bits(f"{key_type} {body}") == 3072


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_a_body_cut_inside_a_length_prefix_is_not_an_openssh_key(cut: int) -> None:
    # the body ends with 1 to 3 bytes of a length: no traceback, the config error
    body = _real_body() + b"\x00\x00\x00\x01"[:cut]
    problem = public_key_problem(_line(body))
    assert problem is not None and problem.startswith(NOT_OPENSSH)


def test_a_body_cut_inside_a_field_is_not_an_openssh_key() -> None:
    body = _real_body()[:-10]
    problem = public_key_problem(_line(body))
    assert problem is not None and problem.startswith(NOT_OPENSSH)


def test_an_rsa_body_with_an_empty_modulus_has_0_bits() -> None:
    # three complete fields, the last (n) empty: the length prefix ends the body exactly
    body = _string(b"ssh-rsa") + _string(b"\x01\x00\x01") + _string(b"")
    problem = public_key_problem(_line(body))
    assert problem is not None
    assert problem.startswith("this RSA key has 0 bits, Azure needs at least 2048")


def test_an_empty_key_type_inside_the_body_is_not_an_openssh_key() -> None:
    body = _string(b"") + _string(b"\x01\x00\x01") + _string(b"\x01" * 256)
    problem = public_key_problem(_line(body))
    assert problem is not None and problem.startswith(NOT_OPENSSH)


@pytest.mark.parametrize(
    ("length", "names_the_type"),
    [(1, True), (2, True), (63, True), (64, True), (65, False)],
)
def test_the_key_type_inside_the_body_is_read_up_to_64_characters(length: int, names_the_type: bool) -> None:
    inner = "x" * length
    body = _string(inner.encode()) + _string(b"\x01\x00\x01") + _string(b"\x01" * 256)
    problem = public_key_problem(_line(body))
    assert problem is not None
    if names_the_type:
        assert problem.startswith(f"the line says 'ssh-rsa' but the key inside is '{inner}'")
    else:
        assert problem.startswith(NOT_OPENSSH)


@pytest.mark.parametrize("line", ["", "ssh-rsa", "AAAAB3NzaC1yc2E", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5"])
def test_rsa_bits_of_a_line_that_is_not_an_rsa_key_is_none(line: str) -> None:
    assert rsa_bits(line) is None


@pytest.mark.parametrize("fields", [1, 2, 4])
def test_an_rsa_body_without_exactly_e_and_n_has_no_modulus_to_measure(fields: int) -> None:
    # RFC 4253 §6.6: "ssh-rsa", e, n; a body missing n, or with a field more, is not a key Azure reads
    parts = [_string(b"ssh-rsa"), _string(b"\x01\x00\x01"), _string(b"\x01" * 384), _string(b"x")]
    problem = public_key_problem(_line(b"".join(parts[:fields])))
    assert problem is not None
    assert problem.startswith("this RSA key has 0 bits, Azure needs at least 2048")


@pytest.mark.parametrize(("line", "count"), [("ssh-rsa", 1), (RSA3072.split()[1], 1), ("   ", 0)])
def test_a_line_without_the_key_type_and_body_names_the_expected_form(line: str, count: int) -> None:
    problem = public_key_problem(line)
    assert problem is not None
    assert problem.startswith(f"expected 'ssh-rsa <base64 key> [comment]', got {count} field(s); ")
    assert "paste the whole line of your .pub file" in problem


# --- keys of each type and size, through the config's SshConfig ---------------------------------------------


def _key(key_type: str, rsa_bits: int = 3072) -> str:
    """A public key line in the OpenSSH wire format (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709 §4)."""
    if key_type == "ssh-rsa":
        modulus = (1 << (rsa_bits - 1)) | int.from_bytes(os.urandom(rsa_bits // 8), "big") | 1
        fields = [_string(b"\x01\x00\x01"), _string(b"\x00" + modulus.to_bytes(rsa_bits // 8, "big"))]
    elif key_type == "ssh-ed25519":
        fields = [_string(os.urandom(32))]
    else:
        curve = key_type.rsplit("-", 1)[1].encode()
        fields = [_string(curve), _string(b"\x04" + os.urandom(64))]
    blob = _string(key_type.encode()) + b"".join(fields)
    return f"{key_type} {base64.b64encode(blob).decode()} someone@example"


@pytest.mark.parametrize("bits", [2048, 3072, 4096])
def test_rsa_keys_of_2048_bits_and_more_are_accepted(bits: int) -> None:
    ssh = SshConfig(admin_user="azureuser", public_key=_key("ssh-rsa", rsa_bits=bits))
    assert ssh.public_key.startswith("ssh-rsa ")


@pytest.mark.parametrize(
    "key_type", ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"]
)
def test_well_formed_keys_azure_ml_refuses_name_the_source_and_the_fix(key_type: str) -> None:
    with pytest.raises(ValidationError) as info:
        SshConfig(admin_user="azureuser", public_key=_key(key_type))
    assert (
        f"a {key_type} key is not accepted: Azure ML compute takes RSA keys only (docs: "
        "machine-learning-enable-ssh.md, 'starting with ssh-rsa'); generate one with "
        "`ssh-keygen -t rsa -b 3072`"
    ) in str(info.value)


def test_rsa_keys_below_2048_bits_are_rejected() -> None:
    with pytest.raises(ValidationError, match="this RSA key has 1024 bits, Azure needs at least 2048"):
        SshConfig(admin_user="azureuser", public_key=_key("ssh-rsa", rsa_bits=1024))


def test_rsa_line_with_another_key_type_inside_is_rejected() -> None:
    line = _key("ecdsa-sha2-nistp256").replace("ecdsa-sha2-nistp256", "ssh-rsa", 1)
    with pytest.raises(ValidationError, match="the key inside is 'ecdsa-sha2-nistp256'"):
        SshConfig(admin_user="azureuser", public_key=line)
