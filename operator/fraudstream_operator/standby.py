"""A standby replica: it answers the liveness endpoint itself until it leads, since kopf serves it only once its
startup handlers are done, and kopf starts only in the leader."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

LivenessAnswer = Callable[[], dict[str, Any] | None]


def _handler(path: str, answer: LivenessAnswer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != path:
                self._reply(404, {"error": f"only {path} is served"})
                return
            body = answer()
            if body is None:
                self._reply(503, {"live": False})
            else:
                self._reply(200, body)

        def _reply(self, status: int, body: dict[str, Any]) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: a probe every few seconds would flood the log."""

    return Handler


class StandbyProbe:
    """Serves `endpoint` (kopf's liveness URL, e.g. http://0.0.0.0:8080/healthz) until `stop()`.

    GET on its path answers 200 with `answer()` as JSON, or 503 when `answer()` is None (not live).
    """

    def __init__(self, endpoint: str, answer: LivenessAnswer) -> None:
        parts = urllib.parse.urlsplit(endpoint)
        if parts.scheme != "http":
            raise ValueError(f"unsupported liveness endpoint {endpoint!r}: only http:// is served")
        self._server = ThreadingHTTPServer(
            (parts.hostname or "localhost", parts.port or 80), _handler(parts.path or "/", answer)
        )
        self._thread = threading.Thread(target=self._server.serve_forever, name="standby-probe", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def stop(self) -> None:
        """Stops serving and frees the port (for kopf's own endpoint)."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
