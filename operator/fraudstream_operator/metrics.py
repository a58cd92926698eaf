"""The operator's Prometheus metrics, and the HTTP server that serves them."""

from __future__ import annotations

import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import Counter, Gauge, Histogram, start_http_server

PUBLISHES = Counter(
    "fraudstream_operator_publishes_total",
    "Sends to the rules topic by kind (rule, tombstone) and result (delivered, unchanged, failed).",
    ["kind", "result"],
)
PUBLISH_LATENCY = Histogram(
    "fraudstream_operator_publish_latency_seconds",
    "Time from producing a record to its delivery report.",
    ["kind"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
LEADER = Gauge("fraudstream_operator_leader", "1 while this replica runs the handlers (it holds the lease).")
RULES_MANAGED = Gauge("fraudstream_operator_rules_managed", "FraudRules the operator currently manages.")
RECONCILE_ERRORS = Counter(
    "fraudstream_operator_reconcile_errors_total",
    "Failed reconciliations of a FraudRule or of the topic, by condition reason.",
    ["reason"],
)


class MetricsServer:
    """prometheus_client's HTTP server, stoppable so that no thread outlives the operator."""

    def __init__(self, addr: str, port: int) -> None:
        self._server: WSGIServer
        self._thread: threading.Thread
        self._server, self._thread = start_http_server(port, addr)
        self._stopped = False

    @property
    def port(self) -> int:
        return int(self._server.server_port)

    def stop(self) -> None:
        """Stops serving; stopping again does nothing."""
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
