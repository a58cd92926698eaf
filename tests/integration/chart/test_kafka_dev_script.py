"""The development broker's start script (charts/fraudstream/files/kafka-dev-start.sh, which the chart mounts and the
`kafka` image ships) boots a real single-node KRaft broker from the same jars, formats its storage only once, and
keeps its topics across a restart, as the StatefulSet's pod does on its volume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import contract_topics, ensure_topics
from fraudstream_localstack.layout import CONFIG, KAFKA_LIBS, require
from fraudstream_localstack.processes import ManagedProcess, free_port, port_open, wait_for
from tests.kafka_helpers import consume_until, json_of, produce
from tests.unit.chart.rendering import KAFKA_DEV_SCRIPT

pytestmark = pytest.mark.integration


def start_broker(data_dir: Path, port: int, controller_port: int, log: Path) -> ManagedProcess:
    env = {
        "KAFKA_LIBS": str(require(KAFKA_LIBS, "kafka")),
        "KAFKA_LOG4J_CONFIG": str(CONFIG / "kafka-log4j2.properties"),
        "KAFKA_DATA_DIR": str(data_dir),
        "KAFKA_ADVERTISED_HOST": "127.0.0.1",
        "KAFKA_LISTEN_HOST": "127.0.0.1",
        "KAFKA_PORT": str(port),
        "KAFKA_CONTROLLER_PORT": str(controller_port),
        "KAFKA_HEAP": "384m",
    }
    broker = ManagedProcess("dev-kafka", ["/bin/sh", str(KAFKA_DEV_SCRIPT)], log, env=env).start()
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}", "log_level": 0})

    def ready() -> bool:
        broker.check_alive()
        return port_open(port) and len(admin.list_topics(timeout=2).brokers) > 0

    try:
        wait_for(ready, 90, "the development broker", interval_s=0.5)
    except BaseException:
        broker.stop()
        raise
    return broker


def test_dev_broker_starts_serves_the_contract_topics_and_survives_a_restart(tmp_path: Path) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "kafka.log"
    port, controller_port = free_port(), free_port()
    settings = KafkaSettings(bootstrap=f"127.0.0.1:{port}")
    topics = Topics()
    broker = start_broker(data_dir, port, controller_port, log)
    try:
        ensure_topics(settings, contract_topics(topics))
        produce(settings, topics.transactions, [("p1", json.dumps({"transactionId": 1}))])
    finally:
        broker.stop()
    first_start = log.read_text()
    assert first_start.count("formatting") == 1, first_start[-2000:]
    assert (data_dir / "server.properties").read_text().count(f"PLAINTEXT://127.0.0.1:{port}") == 2

    broker = start_broker(data_dir, port, controller_port, log)
    try:
        listed = AdminClient(settings.client_config()).list_topics(timeout=10).topics
        assert set(topics.as_env().values()) <= set(listed)
        got = consume_until(settings, topics.transactions, lambda ms: len(ms) >= 1)
        assert json_of(got[0]) == {"transactionId": 1}
    finally:
        broker.stop()
    assert log.read_text().count("formatting") == 1, "storage was formatted again on restart"
