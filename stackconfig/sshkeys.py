"""OpenSSH public key check for Azure ML compute: `ssh-rsa <base64 body> [comment]`, at least 2048 bits.

Standard library only, so the policy pack (its own virtualenv, no pydantic) uses the same check
(policies/ssh_decided_at_creation.py).

Azure ML takes RSA keys only for compute SSH: "provide an RSA public key in the single-line format (starting
with "ssh-rsa") or the multi-line PEM format" (MicrosoftDocs/azure-ai-docs
articles/machine-learning/includes/machine-learning-enable-ssh.md); azure-ai-ml's AmlComputeSshSettings
(azure/ai/ml/entities/_compute/aml_compute.py) says 'Use "ssh-keygen -t rsa -b 2048" to generate your SSH
key pairs'. The key is fixed at cluster creation, so a key Azure refuses means recreating the cluster.
Minimum 2048 bits: "Azure currently supports SSH protocol 2 (SSH-2) RSA public-private key pairs with a
minimum length of 2048 bits" (MicrosoftDocs/azure-docs articles/virtual-machines/linux/create-ssh-keys-
detailed.md); new keys should have 3072 bits or more (NIST SP 800-57 Part 1 Rev. 5, Table 2: RSA-2048 is
112-bit security, acceptable only through 2030; RSA-3072 is 128-bit), which is what the examples use.

The wire format (RFC 4253 §6.6) starts the base64-decoded body with a uint32 length and the key type string,
so `ssh-rsa <body of an ed25519 key>` is caught.
"""

from __future__ import annotations

import base64
import binascii
import struct

KEY_TYPE = "ssh-rsa"
# Key types ssh-keygen writes that Azure ML compute does not take (RFC 5656, RFC 8709, OpenSSH PROTOCOL.u2f).
OTHER_KEY_TYPES = (
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "ssh-dss",
)
RSA_MIN_BITS = 2048
RSA_RECOMMENDED_BITS = 3072
SOURCE = (
    "Azure ML compute takes RSA keys only (docs: machine-learning-enable-ssh.md, 'starting with ssh-rsa')"
)
GENERATE = f"ssh-keygen -t rsa -b {RSA_RECOMMENDED_BITS}"
_FIX = "paste the whole line of your .pub file (ssh-keygen writes it next to the key, e.g. ~/.ssh/id_rsa.pub)"


def _fields(body: bytes) -> list[bytes] | None:
    """The length-prefixed fields of a decoded key body (RFC 4251 §5 strings), or None if malformed."""
    fields, offset = [], 0
    while offset < len(body):
        if offset + 4 > len(body):
            return None
        (length,) = struct.unpack(">I", body[offset : offset + 4])
        offset += 4
        if offset + length > len(body):
            return None
        fields.append(body[offset : offset + length])
        offset += length
    return fields


def _embedded_type(fields: list[bytes] | None) -> str | None:
    """The key type string that starts a key body, or None."""
    if not fields or not 0 < len(fields[0]) <= 64:
        return None
    try:
        return fields[0].decode("ascii")
    except UnicodeDecodeError:
        return None


def rsa_bits(value: str) -> int | None:
    """Modulus size of an `ssh-rsa` public key line; None when the line is not a well-formed RSA key."""
    parts = value.strip().split()
    if len(parts) < 2 or parts[0] != KEY_TYPE:
        return None
    try:
        fields = _fields(base64.b64decode(parts[1], validate=True))
    except (binascii.Error, ValueError):
        return None
    if _embedded_type(fields) != KEY_TYPE or fields is None or len(fields) != 3:
        return None
    # ssh-rsa body: string "ssh-rsa", mpint e, mpint n (RFC 4253 §6.6)
    return int.from_bytes(fields[2], "big").bit_length()


def public_key_problem(value: str) -> str | None:
    """Check an SSH public key line for Azure ML compute. Returns "<what is wrong>; <fix>" or None."""
    text = value.strip()
    if "PRIVATE KEY" in text:
        return "this is a private key, which must never be in config; " + _FIX
    parts = text.split()
    if len(parts) < 2:
        return f"expected 'ssh-rsa <base64 key> [comment]', got {len(parts)} field(s); {_FIX}"
    key_type, encoded = parts[0], parts[1]
    if key_type in OTHER_KEY_TYPES:
        return f"a {key_type} key is not accepted: {SOURCE}; generate one with `{GENERATE}`"
    if key_type != KEY_TYPE:
        return f"key type '{key_type}' is not accepted: {SOURCE}; {_FIX}"
    try:
        body = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return f"the key body is not valid base64; {_FIX}"
    fields = _fields(body)
    embedded = _embedded_type(fields)
    if fields is None or embedded is None:
        return f"the key body is not an OpenSSH public key; {_FIX}"
    if embedded != key_type:
        return f"the line says '{key_type}' but the key inside is '{embedded}'; {_FIX}"
    bits = rsa_bits(text) or 0
    if bits < RSA_MIN_BITS:
        return (
            f"this RSA key has {bits} bits, Azure needs at least {RSA_MIN_BITS}; generate a new one "
            f"(`{GENERATE}`)"
        )
    return None
