"""`python -m fraudstream_detector`: run the detector until SIGINT/SIGTERM, restarting the query after failures.

Start-up waits for Kafka for as long as it takes (saying so), creates missing topics, and checks that the output
topics can take any transaction the input topic accepts (logging what to change when they cannot). While running,
a watchdog keeps liveness (`/livez`), the input lag and the pending input current.

Credentials a broker refuses (a wrong password, a client certificate or CA it does not accept) end the detector at
start with one log line naming the listener and the mechanism, and exit status EXIT_CONFIG: waiting cannot fix
them. Missing ACLs (no topic it may see, no DescribeConfigs) are logged as such and retried, since an
administrator may grant them meanwhile. A checkpoint started with another number of state partitions than
--shuffle-partitions ends it the same way (checkpoint.partitions_problem), and so does a query that Spark refuses
because the checkpoint holds state in an earlier release's layout (checkpoint.layout_problem).

On a new checkpoint whose transactions start at `latest` (checkpoint.seeds), the query first runs as micro-batches of
the rules (pipeline.start_seeding, at most checkpoint.SEEDING_BATCHES), then under Real-time Mode; `/readyz` says
ready from the Real-time Mode query's start. A seeding that fails is tried again only while the checkpoint is still
new (checkpoint.is_new: before Spark kept the sources' starting offsets); after that the restart is Real-time Mode's.
A process seeds at most once.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition
from pyspark.sql.streaming.query import StreamingQuery

from fraudstream_kafka.exceptions import CredentialsRefusedError, NotAuthorizedError
from fraudstream_kafka.security import check_credentials
from fraudstream_kafka.settings import ConfigValue, KafkaSettings
from fraudstream_kafka.topics import ensure_contract_topics, output_headroom_problems

from . import metrics
from .checkpoint import layout_problem, partitions_problem, seeding_rules_per_batch, seeds
from .config import DetectorConfig, parse_config
from .endpoints import Endpoints
from .jvm_evaluator import EvaluatorProgress, evaluator_conf
from .liveness import Liveness, Progress
from .pipeline import listen, start_query, start_seeding
from .session import build_session, stop_session

log = logging.getLogger("fraudstream_detector")
HEALTHY_RUN_S = 60.0
WATCH_INTERVAL_S = 5.0
EXIT_CONFIG = 78  # EX_CONFIG: the configuration is wrong, restarting unchanged cannot help


def wait_for_topics(cfg: DetectorConfig, stop: threading.Event) -> dict[str, int] | None:
    """Creates the contract's missing topics and returns their max.message.bytes, retrying while Kafka cannot be
    reached or an ACL is missing; None if stopped first. Raises CredentialsRefusedError when a broker refuses the
    detector's credentials."""
    delay_s = 1.0
    while not stop.is_set():
        try:
            if check_credentials(cfg.kafka, timeout_s=10, who="the detector"):
                return ensure_contract_topics(cfg.kafka, cfg.topics, timeout_s=10)
            why = "no broker answered"
        except CredentialsRefusedError:
            raise
        except NotAuthorizedError as exc:
            log.error("%s (retrying in %.0f s)", exc, delay_s)
            why = ""
        except (KafkaException, RuntimeError, TimeoutError) as exc:
            why = str(exc) or type(exc).__name__
        if why:
            log.warning("waiting for Kafka at %s (retrying in %.0f s): %s", cfg.kafka.bootstrap, delay_s, why)
            stop.wait(delay_s)
            delay_s = min(delay_s * 2, 30.0)
    return None


class EndOffsets:
    """A topic's offsets as a consumer sees them: each read asks the broker, and answers None while it cannot."""

    def __init__(self, kafka: KafkaSettings, topic: str, group_id_prefix: str) -> None:
        self._topic = topic
        config: dict[str, ConfigValue] = {"group.id": f"{group_id_prefix}-watch", "log_level": 0}
        self._consumer = Consumer(kafka.client_config(**config))

    def read(self) -> dict[int, int] | None:
        """The topic's end offset per partition."""
        watermarks = self._watermarks()
        return None if watermarks is None else {p: end for p, (_, end) in watermarks.items()}

    def span(self) -> int | None:
        """The offsets from the topic's start to its end, over its partitions; None while they cannot be read."""
        watermarks = self._watermarks()
        return None if watermarks is None else sum(end - start for start, end in watermarks.values())

    def _watermarks(self) -> dict[int, tuple[int, int]] | None:
        try:
            partitions = self._consumer.list_topics(self._topic, timeout=5).topics[self._topic].partitions
            return {
                p: self._consumer.get_watermark_offsets(TopicPartition(self._topic, p), timeout=5, cached=False)
                for p in partitions
            }
        except (KafkaException, KeyError):
            return None

    def close(self) -> None:
        self._consumer.close()


def rules_span(cfg: DetectorConfig) -> int | None:
    """The rules topic's offsets from its start to its end (EndOffsets.span), read once; None if they cannot be."""
    rules = EndOffsets(cfg.kafka, cfg.topics.rules, cfg.group_id_prefix)
    try:
        return rules.span()
    finally:
        rules.close()


def batches_run(query: StreamingQuery) -> int:
    """How many micro-batches a query that has ended ran, of its recent progress (idle triggers report none)."""
    return sum(1 for progress in query.recentProgress if "addBatch" in progress.durationMs)


def watch(liveness: Liveness, offsets: EndOffsets, evaluator: EvaluatorProgress, stop: threading.Event) -> None:
    while not stop.wait(WATCH_INTERVAL_S):
        evaluator.poll()
        liveness.tick(offsets.read(), time.monotonic(), int(time.time() * 1000))


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    cfg = parse_config(argv)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    progress = Progress()
    liveness = Liveness(progress, cfg.liveness_timeout_s)
    liveness.query_state(False, time.monotonic())
    ready = threading.Event()
    endpoints = Endpoints(
        cfg.metrics_addr,
        cfg.metrics_port,
        lambda: liveness.alive(time.monotonic()),
        lambda: (True, "ok") if ready.is_set() else (False, "the streaming query is not running"),
    )
    try:
        limits = wait_for_topics(cfg, stop)
    except CredentialsRefusedError as exc:
        log.error("%s", exc)
        endpoints.stop()
        return EXIT_CONFIG
    if limits is None:
        endpoints.stop()
        return 0
    for problem in output_headroom_problems(limits, cfg.topics, cfg.kafka.bootstrap):
        log.error("%s", problem)
    max_request_bytes = max(limits[cfg.topics.alerts], limits[cfg.topics.dlq])
    refusal = partitions_problem(cfg.checkpoint_dir, cfg.shuffle_partitions)
    if refusal is not None:
        log.error("%s", refusal)
        endpoints.stop()
        return EXIT_CONFIG
    conf = {"spark.driver.memory": cfg.driver_memory} if cfg.driver_memory else {}
    conf.update(evaluator_conf(cfg))
    spark = build_session("fraudstream-detector", cfg.master, cfg.shuffle_partitions, conf)
    listen(spark)
    evaluator = EvaluatorProgress(spark, cfg.evaluator_metrics_port, progress)
    offsets = EndOffsets(cfg.kafka, cfg.topics.transactions, cfg.group_id_prefix)
    watcher = threading.Thread(
        target=watch, args=(liveness, offsets, evaluator, stop), name="detector-watch", daemon=True
    )
    watcher.start()
    backoff_s = 1.0
    exit_code = 0
    seeded = False
    try:
        while not stop.is_set():
            seeding = not seeded and seeds(cfg.checkpoint_dir, cfg.starting_offsets)
            if seeding:
                per_batch = seeding_rules_per_batch(rules_span(cfg))
                query = start_seeding(spark, cfg, max_request_bytes, per_batch)
            else:
                query = start_query(spark, cfg, max_request_bytes)
            started = time.monotonic()
            liveness.query_state(True, started)
            if seeding:
                pace = f"each micro-batch reading at most {per_batch} of the rules topic's offsets"
                log.info(
                    "seeding the new checkpoint %s with the rules, %s",
                    cfg.checkpoint_dir,
                    pace if per_batch else "in one micro-batch",
                )
            else:
                log.info("detector query started (checkpoint %s)", cfg.checkpoint_dir)
                ready.set()
            while query.isActive and not stop.wait(0.5):
                pass
            if stop.is_set():
                query.stop()
                break
            if seeding and query.exception() is None:
                seeded = True
                took_s = time.monotonic() - started
                batches = batches_run(query)
                log.info("checkpoint seeded in %.1f s, %d micro-batch%s", took_s, batches, "" if batches == 1 else "es")
                continue
            ready.clear()
            liveness.query_state(False, time.monotonic())
            refusal = layout_problem(cfg.checkpoint_dir, str(query.exception()))
            if refusal is not None:
                log.error("%s", refusal)
                exit_code = EXIT_CONFIG
                break
            metrics.QUERY_RESTARTS.inc()
            log.error(
                "detector query failed, restarting in %.0fs from the checkpoint: %s", backoff_s, query.exception()
            )
            if time.monotonic() - started > HEALTHY_RUN_S:
                backoff_s = 1.0
            stop.wait(backoff_s)
            backoff_s = min(backoff_s * 2, 30.0)
    finally:
        stop.set()
        watcher.join(timeout=WATCH_INTERVAL_S + 10)
        offsets.close()
        stop_session(spark)
        endpoints.stop()
    log.info("detector stopped")
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
