"""Spark's Kafka source and sink (the Java clients) over mutual TLS with the PEM keystore `java_client_properties`
makes from the librdkafka certificate paths, as the detector principal with only its ACLs: its consumer groups are
those of its prefix."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from fraudstream_kafka.acls import DETECTOR_GROUP_PREFIX
from fraudstream_kafka.settings import Topics
from fraudstream_localstack.kafka import KafkaBroker
from fraudstream_localstack.kafka_security import ADMIN, KafkaSecurity
from tests.integration.security.harness import secure_topics
from tests.kafka_helpers import consume_until, produce, text_of

pytestmark = pytest.mark.integration


def test_spark_reads_and_writes_over_mutual_tls_as_the_detector(
    spark: Any, secured_kafka: KafkaBroker, tmp_path: Path
) -> None:
    suffix = uuid.uuid4().hex[:6]
    topics = Topics(f"jv.tx.{suffix}", f"jv.rules.{suffix}", f"jv.alerts.{suffix}", f"jv.dlq.{suffix}")
    secure_topics(secured_kafka, topics)
    produce(secured_kafka.settings("generator", KafkaSecurity.MTLS), topics.transactions,
            [(f"k{i}", f"v{i}") for i in range(10)])  # fmt: skip
    detector = secured_kafka.settings("detector", KafkaSecurity.MTLS)
    options = detector.spark_options()
    assert options["kafka.ssl.keystore.type"] == "PEM" and "PRIVATE KEY" in options["kafka.ssl.keystore.key"]

    query = (
        spark.readStream.format("kafka")
        .options(**options)
        .option("groupIdPrefix", DETECTOR_GROUP_PREFIX)
        .option("subscribe", topics.transactions)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "upper(CAST(value AS STRING)) AS value")
        .writeStream.format("kafka")
        .options(**options)
        .option("topic", topics.alerts)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    try:
        got = consume_until(secured_kafka.settings(ADMIN, KafkaSecurity.MTLS), topics.alerts,
                            lambda ms: len(ms) >= 10, timeout_s=120)  # fmt: skip
    finally:
        query.stop()
    assert sorted(text_of(m) for m in got) == sorted(f"V{i}" for i in range(10))
