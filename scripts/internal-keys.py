#!/usr/bin/env python3
"""Pair keys for StudyStack's service-to-service calls (docs/internal-auth.md).

A service signs its calls to a peer with a key derived from its own INTERNAL_SIGNING_KEY for that
peer; the peer lists that derived key, never the signing key, in INTERNAL_CALLER_KEYS.

    scripts/internal-keys.py pair CALLER RECEIVER      < caller's base64 signing key
        prints the base64 pair key CALLER signs its calls to RECEIVER with
    scripts/internal-keys.py callers RECEIVER          (keys in the environment, see below)
        prints RECEIVER's INTERNAL_CALLER_KEYS: an entry for each caller it serves

`callers` reads each caller's signing key from STUDY_METADATA_INTERNAL_KEY,
REGISTRATION_INTERNAL_KEY and RESPONSE_INTERNAL_KEY, as `make run` and deploy/make-env.sh name them.
"""
import base64
import hashlib
import hmac
import os
import sys

# The callers each service serves; the internal routes check the same (requireCaller).
CALLERS = {
    "study-metadata": ["registration", "response"],
    "registration": ["study-metadata", "response"],
    "response": ["study-metadata", "registration"],
}


def pair_key(signing_key: bytes, caller: str, receiver: str) -> bytes:
    """HKDF-SHA256 (RFC 5869, no salt, 32 bytes), as ServiceKit's InternalKeys.pairKey."""
    info = f"studystack-internal-pair-v1 {caller} -> {receiver}".encode()
    prk = hmac.new(b"\0" * 32, signing_key, hashlib.sha256).digest()
    return hmac.new(prk, info + b"\x01", hashlib.sha256).digest()


def env_key(service: str) -> bytes:
    name = service.upper().replace("-", "_") + "_INTERNAL_KEY"
    value = os.environ.get(name)
    if not value:
        sys.exit(f"{name} is not set")
    return base64.b64decode(value)


def main(argv):
    if len(argv) == 4 and argv[1] == "pair":
        key = base64.b64decode(sys.stdin.read().strip())
        print(base64.b64encode(pair_key(key, argv[2], argv[3])).decode())
    elif len(argv) == 3 and argv[1] == "callers" and argv[2] in CALLERS:
        receiver = argv[2]
        print(",".join(
            f"{caller}={base64.b64encode(pair_key(env_key(caller), caller, receiver)).decode()}"
            for caller in CALLERS[receiver]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
