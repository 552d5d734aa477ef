"""A real SMTP server for the registration tests (aiosmtpd): STARTTLS required, AUTH PLAIN and
LOGIN required after TLS, each accepted message saved as JSON in a directory. Recipients whose
address starts with "bounce" are refused with 550 (a permanent failure).

usage: test-smtp-server.py PORT CERT KEY USER PASSWORD OUTDIR
Prints "ready" once it accepts connections; stops when its standard input closes (the test that
started it ended, even by crashing) or on SIGTERM.
"""
import json
import os
import signal
import ssl
import sys
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def main():
    port, cert, key, user, password, out = sys.argv[1:7]

    class Saver:
        async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
            if address.lower().startswith("bounce"):
                return "550 5.1.1 no such mailbox"
            envelope.rcpt_tos.append(address)
            return "250 OK"

        async def handle_DATA(self, server, session, envelope):
            name = os.path.join(out, "%d.json" % time.time_ns())
            with open(name + ".tmp", "w") as f:
                json.dump({
                    "from": envelope.mail_from,
                    "to": envelope.rcpt_tos,
                    "data": envelope.content.decode("utf-8", "replace"),
                    "tls": session.ssl is not None,
                    "authenticated": session.authenticated,
                }, f)
            os.rename(name + ".tmp", name)
            return "250 2.0.0 OK queued"

    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user \
            and auth_data.password.decode() == password
        return AuthResult(success=ok, handled=False)

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    controller = Controller(
        Saver(), hostname="127.0.0.1", port=int(port), server_hostname="localhost",
        tls_context=context, require_starttls=True, authenticator=authenticate,
        auth_require_tls=True, auth_required=True)
    controller.start()
    print("ready", flush=True)
    # The parent may have started us with signals blocked (a spawned process inherits the mask).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
