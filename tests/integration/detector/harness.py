"""Running the real detector query (Spark + Kafka connector + RocksDB state) against per-test topics."""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Producer
from prometheus_client.parser import text_string_to_metric_families

from fraudstream_detector.config import DetectorConfig
from fraudstream_detector.jvm_evaluator import records_processed
from fraudstream_detector.pipeline import start_query
from fraudstream_kafka.settings import ConfigValue, KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics
from fraudstream_localstack.processes import ManagedProcess, free_port, wait_for
from tests.kafka_helpers import reliable_producer

# A rule that alerts on every transaction (a payer's count in the last hour is at least 1): one alert per
# transaction evaluated, whatever the payer, so alerts count what the detector has evaluated.
COUNT_EVERY_TRANSACTION = {
    "groupingKeyNames": ["payerId"],
    "aggregatorFunctionType": "COUNT",
    "limitOperatorType": "GREATER_EQUAL",
    "limit": 1,
    "windowMinutes": 60,
}


def detector_config(
    kafka: KafkaSettings,
    topics: Topics,
    checkpoint: Path,
    lateness_ms: int = 60_000,
    reorder_wait_ms: int = 0,
) -> DetectorConfig:
    return DetectorConfig(
        kafka=kafka,
        topics=topics,
        checkpoint_dir=checkpoint,
        lateness_ms=lateness_ms,
        shuffle_partitions=2,
        starting_offsets="earliest",
        metrics_port=0,
        master="local[2]",
        checkpoint_interval="10 seconds",
        reorder_wait_ms=reorder_wait_ms,
    )


@dataclass(frozen=True)
class Produced:
    """One record a Script produced: a rule message (`rule`) or a transaction, where Kafka put it, and when."""

    rule: bool
    key: bytes | None
    value: bytes | None
    topic: str
    partition: int
    offset: int
    timestamp_ms: int

    @property
    def order_key(self) -> tuple[int, int, str, int, int]:
        """The detector's processing order: Kafka timestamp; at equal timestamps rules first, then partition and
        offset (CONTRACT section 6)."""
        return (self.timestamp_ms, 0 if self.rule else 1, self.topic, self.partition, self.offset)


@dataclass
class Script:
    """Records to produce with explicit, strictly increasing Kafka timestamps, remembered for the oracle."""

    kafka: KafkaSettings
    topics: Topics
    next_ts_ms: int = field(default_factory=lambda: int(time.time() * 1000) - 600_000)
    records: list[Produced] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._producer = reliable_producer(self.kafka)
        self._compressing: Producer | None = None

    def _compressing_producer(self) -> Producer:
        if self._compressing is None:
            compressing: dict[str, ConfigValue] = {"compression.type": "zstd", "message.max.bytes": 64 << 20}
            self._compressing = reliable_producer(self.kafka, **compressing)
        return self._compressing

    def _produce(
        self, topic: str, rule: bool, key: bytes | None, value: bytes | None, compressed: bool = False
    ) -> None:
        """Produces one record and waits for its acknowledgement, so log order equals timestamp order. `compressed`:
        zstd-compressed by a producer that takes records of up to 64 MiB, since the broker bounds only the batch's
        compressed size."""
        self.next_ts_ms += 10
        delivered: list[Any] = []
        producer = self._compressing_producer() if compressed else self._producer
        producer.produce(
            topic, key=key, value=value, timestamp=self.next_ts_ms, on_delivery=lambda e, m: delivered.append((e, m))
        )
        producer.flush(30)
        err, msg = delivered[0]
        assert err is None, err
        self.records.append(Produced(rule, key, value, topic, msg.partition(), msg.offset(), self.next_ts_ms))

    def rule(self, rule_id: str, spec: dict[str, object] | None, generation: int = 1, uid: str = "uid-1") -> None:
        value = None
        if spec is not None:
            value = json.dumps({"ruleId": rule_id, "generation": generation, "uid": uid, "spec": spec}).encode()
        self._produce(self.topics.rules, True, rule_id.encode(), value)

    def transaction(self, tx: dict[str, object] | bytes, key: str = "k", compressed: bool = False) -> None:
        value = tx if isinstance(tx, bytes) else json.dumps(tx).encode()
        self._produce(self.topics.transactions, False, key.encode(), value, compressed)

    def transactions(self, txs: Sequence[dict[str, object] | bytes]) -> None:
        for tx in txs:
            self.transaction(tx)


@dataclass
class RunningDetector:
    """A started detector query."""

    spark: Any
    config: DetectorConfig
    query: Any

    def settle(self, script: Script, timeout_s: float = 120, preexisting: int = 0) -> None:
        """Returns once every record `script` produced, and `preexisting` records produced before it, has been
        evaluated (its outputs may still be in flight)."""

        def caught_up() -> bool:
            assert self.query.isActive, self.query.exception()
            return bool(records_processed(self.spark, self.config) >= len(script.records) + preexisting)

        wait_for(caught_up, timeout_s, "the JVM evaluator to process every produced record")


@contextmanager
def running_detector(spark: Any, config: DetectorConfig) -> Iterator[RunningDetector]:
    """The detector query, started."""
    limits = ensure_contract_topics(config.kafka, config.topics)
    max_request_bytes = max(limits[config.topics.alerts], limits[config.topics.dlq])
    query = start_query(spark, config, max_request_bytes)
    try:
        yield RunningDetector(spark, config, query)
    finally:
        query.stop()


@dataclass(frozen=True)
class DetectorEndpoints:
    """Where a detector process answers: `base` serves /livez, /readyz and the driver's /metrics; `evaluator_metrics`
    is the /metrics the JVM running the evaluator's tasks serves (the driver's JVM, with its local master)."""

    base: str
    evaluator_metrics: str

    @property
    def metrics_urls(self) -> list[str]:
        return [f"{self.base}/metrics", self.evaluator_metrics]

    def ready(self) -> bool:
        """Whether /readyz answers 200 (the Real-time Mode query runs); False while nothing answers."""
        try:
            with urllib.request.urlopen(f"{self.base}/readyz", timeout=2) as response:
                return bool(response.status == 200)
        except OSError:
            return False


def detector_process(
    kafka: KafkaSettings,
    topics: Topics,
    checkpoint: Path,
    log: Path,
    extra_args: Sequence[str] = (),
) -> tuple[ManagedProcess, DetectorEndpoints]:
    """`python -m fraudstream_detector` against `topics`, reading transactions from the beginning, with its HTTP
    endpoints on free ports, and its temporary files beside `log` (a detector killed cannot remove them)."""
    port, evaluator_port = free_port(), free_port()
    argv = [sys.executable, "-m", "fraudstream_detector", "--checkpoint-dir", str(checkpoint)]
    argv += ["--metrics-port", str(port), "--starting-offsets", "earliest"]
    argv += ["--evaluator-metrics-port", str(evaluator_port), *extra_args]
    endpoints = DetectorEndpoints(f"http://127.0.0.1:{port}", f"http://127.0.0.1:{evaluator_port}/metrics")
    process = ManagedProcess(
        "detector", argv, log, env={**kafka.as_env(), **topics.as_env(), "TMPDIR": str(log.parent)}
    )
    return process.start(), endpoints


Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _add_samples(samples: Samples, exposition: str) -> Samples:
    """`samples` plus every sample of a Prometheus text exposition, by (name, labels), summed as PromQL's `sum`."""
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            key = (sample.name, frozenset(sample.labels.items()))
            samples[key] = samples.get(key, 0.0) + sample.value
    return samples


def samples_at(url: str, samples: Samples | None = None) -> Samples:
    """Every sample one /metrics URL serves, by (name, labels), added to `samples` when given."""
    with urllib.request.urlopen(url, timeout=5) as response:
        return _add_samples({} if samples is None else samples, response.read().decode())


def scrape(endpoints: DetectorEndpoints) -> Samples:
    """Every sample the detector serves, by (name, labels), summed over its endpoints."""
    samples: Samples = {}
    for url in endpoints.metrics_urls:
        samples_at(url, samples)
    return samples


def evaluator_samples(spark: Any, config: DetectorConfig) -> Samples:
    """What the JVM evaluator of an in-process detector (its tasks in this test's driver JVM) would serve."""
    metrics = spark._jvm.io.fraudstream.evaluator.spark.EvaluatorMetrics.of(str(config.checkpoint_dir))
    return _add_samples({}, metrics.exposition())


def by_label(samples: Samples, name: str, label: str) -> dict[str, float]:
    """Metric `name`'s samples keyed by the value of their label `label`."""
    return {dict(labels)[label]: value for (n, labels), value in samples.items() if n == name}


def sample(endpoints: DetectorEndpoints, name: str, **labels: str) -> float:
    """One sample's value (0 when the detector does not serve it yet)."""
    return scrape(endpoints).get((name, frozenset(labels.items())), 0.0)
