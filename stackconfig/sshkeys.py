"""OpenSSH public key check: `<type> <base64 body> [comment]`, with the type embedded in the body matching.

The wire format (RFC 4253 §6.6) starts the base64-decoded body with a uint32 length and the key type string,
so `ssh-ed25519 <body of an RSA key>` is caught. Accepted types: ssh-rsa, ssh-ed25519 and
ecdsa-sha2-nistp256/384/521 (the key types OpenSSH's ssh-keygen writes; RFC 4253, RFC 5656, RFC 8709).
"""

from __future__ import annotations

import base64
import binascii
import struct

KEY_TYPES = ("ssh-rsa", "ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521")
_FIX = "paste the whole line of your .pub file (ssh-keygen -t ed25519 writes ~/.ssh/id_ed25519.pub)"


def _embedded_type(body: bytes) -> str | None:
    """The key type string at the start of a decoded key body, or None if the body is malformed."""
    if len(body) < 4:
        return None
    (length,) = struct.unpack(">I", body[:4])
    if length == 0 or length > 64 or len(body) < 4 + length:
        return None
    try:
        return body[4 : 4 + length].decode("ascii")
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
    embedded = _embedded_type(body)
    if embedded is None:
        return f"the key body is not an OpenSSH public key; {_FIX}"
    if embedded != key_type:
        return f"the line says '{key_type}' but the key inside is '{embedded}'; {_FIX}"
    return None
