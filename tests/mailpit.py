"""Reading the mails the site sent through the mail catcher's REST API (Mailpit, started by
`make services` and by the test session's ``services`` fixture)."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.parse
import urllib.request
from typing import Any

MAILPIT = f"http://{os.environ.get('MAILPIT_UI_LISTEN', '127.0.0.1:8025')}"


def _get(path: str) -> Any:
    with urllib.request.urlopen(f"{MAILPIT}{path}", timeout=10) as response:  # noqa: S310 (loopback)
        return json.loads(response.read())


def mails_to(address: str) -> list[dict[str, Any]]:
    """Summaries of every mail held for ``address``, newest first."""
    query = urllib.parse.urlencode({"query": f'to:"{address}"'})
    return list(_get(f"/api/v1/search?{query}")["messages"])


def mail_wait(address: str, *, subject: str, timeout: float = 30) -> dict[str, Any]:
    """The newest mail to ``address`` whose subject contains ``subject``, in full (``Text``,
    ``HTML``, headers); waits for it to arrive."""
    deadline = time.monotonic() + timeout
    while True:
        for summary in mails_to(address):
            if subject in summary["Subject"]:
                return dict(_get(f"/api/v1/message/{summary['ID']}"))
        if time.monotonic() > deadline:
            raise AssertionError(f"no mail to {address} about {subject!r} within {timeout}s: {mails_to(address)}")
        time.sleep(0.25)


def link_in(mail: dict[str, Any], *, path: str) -> str:
    """The first link in the mail's text whose path starts with ``path``."""
    found = re.search(r"https?://[^\s/]+" + re.escape(path) + r"\S*", mail["Text"])
    assert found is not None, mail["Text"]
    return found.group(0)
