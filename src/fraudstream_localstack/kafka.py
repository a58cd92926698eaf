"""A single-node Apache Kafka broker in KRaft mode (combined broker + controller) from the Maven-resolved jars."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import AdminClient

from .layout import CONFIG, KAFKA_LIBS, require
from .processes import ManagedProcess, free_port, port_open, wait_for


@dataclass(frozen=True)
class KafkaPorts:
    broker: int
    controller: int

    @staticmethod
    def free() -> KafkaPorts:
        return KafkaPorts(broker=free_port(), controller=free_port())


def _server_properties(ports: KafkaPorts, log_dir: Path) -> str:
    return "\n".join(
        [
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@127.0.0.1:{ports.controller}",
            f"listeners=PLAINTEXT://127.0.0.1:{ports.broker},CONTROLLER://127.0.0.1:{ports.controller}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{ports.broker}",
            "controller.listener.names=CONTROLLER",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            f"log.dirs={log_dir}",
            "num.partitions=1",
            "auto.create.topics.enable=false",
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=4",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
            # Compaction must be observable in tests within seconds, not hours.
            "log.cleaner.backoff.ms=1000",
            "",
        ]
    )


class KafkaBroker:
    """A real broker on 127.0.0.1. `start()` returns once the broker answers metadata requests.

    Data survives `stop()`/`start()` on the same `data_dir`, which is what outage tests rely on.
    """

    def __init__(self, data_dir: Path, ports: KafkaPorts | None = None, heap: str = "512m") -> None:
        self.data_dir = data_dir
        self.ports = ports or KafkaPorts.free()
        self.heap = heap
        self._proc: ManagedProcess | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.ports.broker}"

    def _java(self, main: str, *args: str) -> list[str]:
        require(KAFKA_LIBS, "kafka")
        return [
            "java",
            f"-Xmx{self.heap}",
            "-XX:+UseG1GC",
            "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={CONFIG / 'kafka-log4j2.properties'}",
            "-cp",
            f"{KAFKA_LIBS}/*",
            main,
            *args,
        ]

    def _format(self, props: Path, log_dir: Path) -> None:
        if (log_dir / "meta.properties").exists():
            return
        cluster_id = uuid.uuid4().hex[:22]
        fmt = ManagedProcess(
            "kafka-storage-format",
            self._java("kafka.tools.StorageTool", "format", "-t", cluster_id, "-c", str(props)),
            self.data_dir / "format.log",
        ).start()
        wait_for(lambda: not fmt.alive(), 120, "kafka storage format")
        if not (log_dir / "meta.properties").exists():
            raise RuntimeError(f"kafka storage format failed:\n{fmt.log_tail()}")
        fmt.stop()

    def start(self, timeout_s: float = 90) -> KafkaBroker:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log_dir = self.data_dir / "logs"
        props = self.data_dir / "server.properties"
        props.write_text(_server_properties(self.ports, log_dir))
        self._format(props, log_dir)
        self._proc = ManagedProcess("kafka", self._java("kafka.Kafka", str(props)), self.data_dir / "kafka.log").start()
        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})

        def ready() -> bool:
            assert self._proc is not None
            self._proc.check_alive()
            return port_open(self.ports.broker) and len(admin.list_topics(timeout=2).brokers) > 0

        try:
            wait_for(ready, timeout_s, f"kafka at {self.bootstrap}", interval_s=0.5)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._proc:
            self._proc.stop()
            self._proc = None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.alive()
