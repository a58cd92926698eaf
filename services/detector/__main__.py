"""`python -m fraudstream_detector`: run the detector until SIGINT/SIGTERM, restarting the query after failures."""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time

from prometheus_client import start_http_server

from fraudstream_kafka.topics import contract_topics, ensure_topics

from .config import parse_config
from .job import ProgressMetrics, build_query
from .jvm_evaluator import MetricsBridge, build_jvm_query
from .session import build_session
from .sink import BatchSink

log = logging.getLogger("fraudstream_detector")
HEALTHY_RUN_S = 60.0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    cfg = parse_config(argv)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    start_http_server(cfg.metrics_port)
    ensure_topics(cfg.kafka, contract_topics(cfg.topics))
    conf = {"spark.driver.memory": cfg.driver_memory} if cfg.driver_memory else {}
    spark = build_session("fraudstream-detector", cfg.master, cfg.shuffle_partitions, conf)
    spark.streams.addListener(ProgressMetrics(count_input_rows=cfg.evaluator == "python"))
    bridge = MetricsBridge(spark, cfg).start() if cfg.evaluator == "jvm" else None
    sink = BatchSink(cfg.kafka, cfg.topics) if cfg.evaluator == "python" else None
    backoff_s = 1.0
    try:
        while not stop.is_set():
            query = build_jvm_query(spark, cfg) if sink is None else build_query(spark, cfg, sink)
            started = time.monotonic()
            log.info("detector query started (%s evaluator, checkpoint %s)", cfg.evaluator, cfg.checkpoint_dir)
            while query.isActive and not stop.wait(0.5):
                pass
            if stop.is_set():
                query.stop()
                break
            log.error(
                "detector query failed, restarting in %.0fs from the checkpoint: %s", backoff_s, query.exception()
            )
            if time.monotonic() - started > HEALTHY_RUN_S:
                backoff_s = 1.0
            stop.wait(backoff_s)
            backoff_s = min(backoff_s * 2, 30.0)
    finally:
        if bridge is not None:
            bridge.stop()
        spark.stop()
    log.info("detector stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
