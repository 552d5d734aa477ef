"""schemathesis hooks for fuzzing the console (scripts/fuzz.sh): every generated form carries the
fuzzing session's form token (CONSOLE_CSRF), so the cases reach past the form check into the
pages' own handling of what they are sent, with a valid session."""
import os

import schemathesis


@schemathesis.hook
def map_body(context, body):
    if isinstance(body, dict):
        body["csrf"] = os.environ["CONSOLE_CSRF"]
    return body
