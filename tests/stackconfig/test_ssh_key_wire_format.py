"""The SSH key check on key bodies that are truncated or malformed as OpenSSH writes them (RFC 4251 §5
strings: a uint32 length, then that many bytes; RFC 4253 §6.6 ssh-rsa: string "ssh-rsa", mpint e, mpint n),
and on the line as users paste it (with or without the comment `ssh-keygen` appends).

Each bad body gets the config error naming the problem, never a traceback; the key type string is at most 64
characters (RFC 4250 §4.6.1: "Names MUST NOT be longer than 64 characters")."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import pytest

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
