"""The detector's HTTP endpoints on one port: `/metrics` (Prometheus), `/livez` (liveness) and `/readyz`.

`/livez` and `/readyz` answer 200 with "ok", or 503 with the reason, as the given checks say.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

Check = Callable[[], tuple[bool, str]]


class Endpoints:
    """A daemon HTTP server; `stop` shuts it down."""

    def __init__(self, addr: str, port: int, liveness: Check, readiness: Check) -> None:
        checks = {"/livez": liveness, "/readyz": readiness}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    self._answer(200, generate_latest(REGISTRY), CONTENT_TYPE_LATEST)
                elif path in checks:
                    ok, why = checks[path]()
                    self._answer(200 if ok else 503, (why + "\n").encode(), "text/plain; charset=utf-8")
                else:
                    self._answer(404, b"not found\n", "text/plain; charset=utf-8")

            def _answer(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer((addr, port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="detector-http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
