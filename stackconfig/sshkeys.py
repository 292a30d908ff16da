"""OpenSSH public key check: `<type> <base64 body> [comment]`, with the type embedded in the body matching.

The wire format (RFC 4253 §6.6) starts the base64-decoded body with a uint32 length and the key type string,
so `ssh-ed25519 <body of an RSA key>` is caught. Accepted types: ssh-rsa, ssh-ed25519 and
ecdsa-sha2-nistp256/384/521 (the key types OpenSSH's ssh-keygen writes; RFC 4253, RFC 5656, RFC 8709).

RSA keys need at least 2048 bits: "Azure currently supports SSH protocol 2 (SSH-2) RSA public-private key
pairs with a minimum length of 2048 bits" (MicrosoftDocs/azure-docs
articles/virtual-machines/linux/create-ssh-keys-detailed.md, "Supported SSH key formats"). The older version
of that page went on "Other key formats such as ED25519 and ECDSA are not supported" (quoted in
MicrosoftDocs/azure-docs #112770 and Azure/AKS #2850); VMs gained ED25519 later (Azure/AzureVM #26,
hashicorp/terraform-provider-azurerm #28912: "Support for ED25519 is available via the portal"). Whether
AmlCompute's admin SSH key accepts ED25519/ECDSA is NOT confirmed; an RSA key (>= 2048 bits) is the safe
choice.
"""

from __future__ import annotations

import base64
import binascii
import struct

KEY_TYPES = ("ssh-rsa", "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521")
_FIX = "paste the whole line of your .pub file (ssh-keygen writes it next to the key, e.g. ~/.ssh/id_rsa.pub)"


RSA_MIN_BITS = 2048


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


def public_key_problem(value: str) -> str | None:
    """Check an SSH public key line. Returns "<what is wrong>; <fix>" or None."""
    text = value.strip()
    if "PRIVATE KEY" in text:
        return "this is a private key, which must never be in config; " + _FIX
    parts = text.split()
    if len(parts) < 2:
        return f"expected '<type> <base64 key> [comment]', got {len(parts)} field(s); {_FIX}"
    key_type, encoded = parts[0], parts[1]
    if key_type not in KEY_TYPES:
        return f"key type '{key_type}' is not accepted (use one of {', '.join(KEY_TYPES)}); {_FIX}"
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
    if key_type == "ssh-rsa":
        # ssh-rsa body: string "ssh-rsa", mpint e, mpint n (RFC 4253 §6.6)
        bits = int.from_bytes(fields[2], "big").bit_length() if len(fields) == 3 else 0
        if bits < RSA_MIN_BITS:
            return (
                f"this RSA key has {bits} bits, Azure needs at least {RSA_MIN_BITS}; "
                "generate a new one (ssh-keygen -t rsa -b 4096)"
            )
    return None
