"""A single-node Apache Kafka broker in KRaft mode (combined broker + controller) from the Maven-resolved jars.

Plain (the default): one PLAINTEXT listener, no authorization. Secured (given `SecurityFiles`): every listener is
TLS with the local CA, and the StandardAuthorizer allows only what ACLs grant (super users: `admin`, `broker`):

| listener | port | clients authenticate with |
|---|---|---|
| `SASL_SSL` | `ports.broker` | a SCRAM-SHA-512 password (principal `User:<username>`) |
| `SSL` | `ports.mtls` | a client certificate CN=<user>,O=fraudstream-local (mutual TLS, principal `User:<user>`) |
| `CONTROLLER` | `ports.controller` | the broker's own certificate (KRaft controller traffic) |

So one secured broker serves both secured modes of the local stack and of the tests, with the same principals and
the same ACLs. Each start (re)writes every user's SCRAM credential from its password file.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialAlteration,
    UserScramCredentialUpsertion,
)

from fraudstream_kafka.security import check_credentials
from fraudstream_kafka.settings import KafkaSettings

from .kafka_security import (
    ADMIN,
    BROKER,
    PRINCIPAL_MAPPING_RULES,
    SCRAM_MECHANISM,
    USERS,
    KafkaSecurity,
    SecurityFiles,
)
from .layout import CONFIG, KAFKA_LIBS, require
from .processes import ManagedProcess, free_port, port_open, wait_for

SCRAM_ITERATIONS = 8192


@dataclass(frozen=True)
class KafkaPorts:
    broker: int
    controller: int
    mtls: int = 0  # the mutual-TLS listener of a secured broker; unused by a plain one

    @staticmethod
    def free() -> KafkaPorts:
        return KafkaPorts(broker=free_port(), controller=free_port(), mtls=free_port())


def _listener_properties(ports: KafkaPorts, security: SecurityFiles | None) -> list[str]:
    if security is None:
        return [
            f"listeners=PLAINTEXT://127.0.0.1:{ports.broker},CONTROLLER://127.0.0.1:{ports.controller}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{ports.broker}",
            "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        ]
    if not ports.mtls:
        raise ValueError("a secured broker needs a port for its mutual-TLS listener (KafkaPorts.mtls)")
    return [
        f"listeners=SASL_SSL://127.0.0.1:{ports.broker},SSL://127.0.0.1:{ports.mtls},"
        f"CONTROLLER://127.0.0.1:{ports.controller}",
        f"advertised.listeners=SASL_SSL://127.0.0.1:{ports.broker},SSL://127.0.0.1:{ports.mtls}",
        "inter.broker.listener.name=SSL",
        "listener.security.protocol.map=SASL_SSL:SASL_SSL,SSL:SSL,CONTROLLER:SSL",
        f"sasl.enabled.mechanisms={SCRAM_MECHANISM}",
        # The broker verifies SCRAM against the credentials in the metadata log; its login module takes no options.
        f"listener.name.sasl_ssl.{SCRAM_MECHANISM.lower()}.sasl.jaas.config="
        "org.apache.kafka.common.security.scram.ScramLoginModule required;",
        "ssl.keystore.type=PEM",
        f"ssl.keystore.location={security.broker_keystore}",
        "ssl.truststore.type=PEM",
        f"ssl.truststore.location={security.ca}",
        "listener.name.ssl.ssl.client.auth=required",
        "listener.name.controller.ssl.client.auth=required",
        f"ssl.principal.mapping.rules={PRINCIPAL_MAPPING_RULES}",
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        f"super.users=User:{ADMIN};User:{BROKER}",
        "allow.everyone.if.no.acl.found=false",
    ]


def _server_properties(ports: KafkaPorts, log_dir: Path, security: SecurityFiles | None = None) -> str:
    return "\n".join(
        [
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@127.0.0.1:{ports.controller}",
            *_listener_properties(ports, security),
            "controller.listener.names=CONTROLLER",
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

    Data survives `stop()`/`start()` on the same `data_dir`, which is what outage tests rely on. With `security`
    the broker is secured (see the module docstring); its credentials are made in that directory if missing.
    """

    def __init__(
        self, data_dir: Path, ports: KafkaPorts | None = None, heap: str = "512m", security: SecurityFiles | None = None
    ) -> None:
        self.data_dir = data_dir
        self.ports = ports or KafkaPorts.free()
        self.heap = heap
        self.security = security
        self._proc: ManagedProcess | None = None

    @property
    def bootstrap(self) -> str:
        """The PLAINTEXT listener of a plain broker, the SASL_SSL listener of a secured one."""
        return f"127.0.0.1:{self.ports.broker}"

    @property
    def mtls_bootstrap(self) -> str:
        """The mutual-TLS listener of a secured broker."""
        return f"127.0.0.1:{self.ports.mtls}"

    def settings(self, user: str = ADMIN, mode: KafkaSecurity = KafkaSecurity.SASL_SSL) -> KafkaSettings:
        """Client settings for `user` on the listener of `mode`; a plain broker has one listener and no users."""
        if self.security is None or not mode.secured:
            return KafkaSettings(bootstrap=self.bootstrap)
        bootstrap = self.mtls_bootstrap if mode is KafkaSecurity.MTLS else self.bootstrap
        return KafkaSettings(bootstrap=bootstrap, client_properties=self.security.client_properties(user, mode))

    @property
    def admin_settings(self) -> KafkaSettings:
        """The super user's settings (over mutual TLS on a secured broker): topics, ACLs, credentials."""
        return self.settings(ADMIN, KafkaSecurity.MTLS)

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

    @property
    def log_dir(self) -> Path:
        """Where the broker keeps its topics' log segments (the bulk of its data)."""
        return self.data_dir / "logs"

    def start(self, timeout_s: float = 90) -> KafkaBroker:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log_dir = self.log_dir
        props = self.data_dir / "server.properties"
        if self.security is not None:
            self.security.make()
        props.write_text(_server_properties(self.ports, log_dir, self.security))
        self._format(props, log_dir)
        self._proc = ManagedProcess("kafka", self._java("kafka.Kafka", str(props)), self.data_dir / "kafka.log").start()
        admin = AdminClient({**self.admin_settings.client_config(), "log_level": 0})

        def ready() -> bool:
            assert self._proc is not None
            self._proc.check_alive()
            return port_open(self.ports.broker) and len(admin.list_topics(timeout=2).brokers) > 0

        try:
            wait_for(ready, timeout_s, f"kafka at {self.bootstrap}", interval_s=0.5)
            if self.security is not None:
                self._write_scram_credentials(admin, self.security, timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _write_scram_credentials(self, admin: AdminClient, security: SecurityFiles, timeout_s: float) -> None:
        """Upserts every user's SCRAM credential and waits until the broker accepts one (they propagate through the
        metadata log)."""
        info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS)
        upserts: list[UserScramCredentialAlteration] = [
            UserScramCredentialUpsertion(user, info, security.password(user).encode()) for user in USERS
        ]
        for future in admin.alter_user_scram_credentials(upserts, request_timeout=timeout_s).values():
            future.result(timeout=timeout_s)
        scram = self.settings(ADMIN, KafkaSecurity.SASL_SSL)
        wait_for(lambda: check_credentials(scram, timeout_s=2), timeout_s, f"SCRAM login at {self.bootstrap}", 0.2)

    def stop(self) -> None:
        if self._proc:
            self._proc.stop()
            self._proc = None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.alive()
