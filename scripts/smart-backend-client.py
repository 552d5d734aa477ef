#!/usr/bin/env python3
"""A SMART Backend Services client, as one is written with PyJWT and cryptography (PyPI): it
makes its keys, signs a client assertion, and asks a token endpoint for a token. The FHIR API's
tests use it as the client side; docs/fhir.md shows the same steps.

  smart-backend-client.py keygen DIR
      Makes an RSA key (3072 bits, for RS384) and a P-384 key (for ES384) in DIR and prints their
      public JWK Set: {"keys": [{"kid": "rs384-1", ...}, {"kid": "es384-1", ...}]}.
  smart-backend-client.py token TOKEN_URL CLIENT_ID KEY_PEM KID ALG SCOPE [name=value ...]
      Signs an assertion (iss and sub CLIENT_ID, aud TOKEN_URL, exp 4 minutes ahead, a fresh jti)
      and posts the token request. Overrides: aud=, exp=SECONDS_FROM_NOW, jti=, sign_alg= (sign
      with another algorithm than the header says), grant_type=. Prints {"status", "body",
      "jti"} and exits 0 whatever the server answered.
"""
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa


def keygen(directory):
    os.makedirs(directory, exist_ok=True)
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=3072)
    ec_key = ec.generate_private_key(ec.SECP384R1())
    keys = []
    for name, key, algorithm in (("rs384", rsa_key, jwt.algorithms.RSAAlgorithm), ("es384", ec_key, jwt.algorithms.ECAlgorithm)):
        with open(os.path.join(directory, f"{name}.pem"), "wb") as out:
            out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        public = json.loads(algorithm.to_jwk(key.public_key()))
        public.update({"kid": f"{name}-1", "use": "sig", "alg": name.upper()})
        keys.append(public)
    print(json.dumps({"keys": keys}))


def assertion(token_url, client_id, key_pem, kid, alg, overrides, jti=None):
    """A client assertion (RFC 7523) as SMART Backend Services asks for it."""
    with open(key_pem, "rb") as source:
        key = serialization.load_pem_private_key(source.read(), password=None)
    claims = {
        "iss": client_id, "sub": client_id, "aud": overrides.get("aud", token_url),
        "exp": int(time.time()) + int(overrides.get("exp", "240")), "jti": jti or str(uuid.uuid4()),
    }
    # PyJWT writes the header's alg from the algorithm it signs with.
    return jwt.encode(claims, key, algorithm=overrides.get("sign_alg", alg), headers={"kid": kid, "typ": "JWT"})


def request_token(token_url, client_id, key_pem, kid, alg, scope, overrides):
    """Posts the token request; {"status", "body", "jti"} whatever the server answered."""
    jti = overrides.get("jti", str(uuid.uuid4()))
    signed = assertion(token_url, client_id, key_pem, kid, alg, overrides, jti=jti)
    form = urllib.parse.urlencode({
        "grant_type": overrides.get("grant_type", "client_credentials"),
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": signed,
        "scope": scope,
    }).encode()
    request = urllib.request.Request(token_url, data=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            status, body = reply.status, reply.read()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read()
    return {"status": status, "body": json.loads(body or b"null"), "jti": jti}


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "keygen":
        keygen(sys.argv[2])
    elif len(sys.argv) >= 8 and sys.argv[1] == "token":
        print(json.dumps(request_token(*sys.argv[2:8], dict(argument.split("=", 1) for argument in sys.argv[8:]))))
    else:
        sys.exit(__doc__)
