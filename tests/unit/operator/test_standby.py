"""The standby's liveness endpoint: 200 with the answer while live, 503 when not, 404 elsewhere; stopping frees
the port for kopf's own endpoint."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from typing import Any

import pytest

from fraudstream_localstack.processes import free_port
from fraudstream_operator.standby import StandbyProbe


def get(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_answers_while_live_and_refuses_once_not() -> None:
    answer: dict[str, Any] | None = {"standby": True, "holder": "replica-a"}
    port = free_port()
    probe = StandbyProbe(f"http://127.0.0.1:{port}/healthz", lambda: answer)
    try:
        assert get(f"http://127.0.0.1:{port}/healthz") == (200, {"standby": True, "holder": "replica-a"})
        assert get(f"http://127.0.0.1:{port}/healthz?verbose=1")[0] == 200
        assert get(f"http://127.0.0.1:{port}/metrics")[0] == 404
        answer = None
        assert get(f"http://127.0.0.1:{port}/healthz") == (503, {"live": False})
    finally:
        probe.stop()

    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp, kopf's server, binds
        sock.bind(("127.0.0.1", port))
        sock.listen()


def test_only_http_endpoints_are_served() -> None:
    with pytest.raises(ValueError, match="only http://"):
        StandbyProbe("https://127.0.0.1:8443/healthz", dict)
