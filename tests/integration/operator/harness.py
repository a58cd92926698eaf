"""Helpers for operator tests: FraudRules on the real API server, the rules topic read independently, the
operator run in-process with kopf.testing.KopfRunner, and replicas run as processes of their own. Every wait is
a poll with a deadline."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
from kopf.testing import KopfRunner
from kubernetes import client

from fraudstream_kafka.settings import ConfigValue, KafkaSettings, Topics
from fraudstream_localstack.operator_component import install_crd, kubectl
from fraudstream_localstack.processes import ManagedProcess, free_port, wait_for
from tests.kafka_helpers import key_of

GROUP, VERSION, PLURAL = "fraudstream.io", "v1alpha1", "fraudrules"
KOPF_FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"

BASE_SPEC: dict[str, Any] = {
    "groupingKeyNames": ["payerId", "beneficiaryId"],
    "aggregatorFunctionType": "SUM",
    "aggregateFieldName": "paymentAmount",
    "limitOperatorType": "GREATER",
    "limit": 200000,
    "windowMinutes": 1440,
}

# BASE_SPEC as a manifest named big-spender, for the pipeline tests that `kubectl apply` it (format in `namespace`).
BIG_SPENDER_MANIFEST = """
apiVersion: fraudstream.io/v1alpha1
kind: FraudRule
metadata:
  name: big-spender
  namespace: {namespace}
spec:
  groupingKeyNames: [payerId, beneficiaryId]
  aggregatorFunctionType: SUM
  aggregateFieldName: paymentAmount
  limitOperatorType: GREATER
  limit: "200000"
  windowMinutes: 1440
"""


def fraud_rule(name: str, spec: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    """A FraudRule object; without `namespace`, the request's."""
    metadata = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "FraudRule", "metadata": metadata, "spec": spec}


def ready_condition(obj: dict[str, Any]) -> dict[str, Any] | None:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "Ready"), None)


class FraudRules:
    """FraudRules of one namespace, through the admin client."""

    def __init__(self, api_client: client.ApiClient, namespace: str) -> None:
        self.api = client.CustomObjectsApi(api_client)
        self.core = client.CoreV1Api(api_client)
        self.namespace = namespace

    def create(self, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        created = self.api.create_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, fraud_rule(name, spec)
        )
        return cast(dict[str, Any], created)

    def patch(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        patched = self.api.patch_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, name, body, _content_type="application/merge-patch+json"
        )
        return cast(dict[str, Any], patched)

    def delete(self, name: str) -> None:
        self.api.delete_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, name)

    def get(self, name: str) -> dict[str, Any] | None:
        try:
            obj = self.api.get_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, name)
        except client.ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return cast(dict[str, Any], obj)

    def wait_condition(
        self, name: str, status: str, reason: str, generation: int, timeout_s: float = 60
    ) -> dict[str, Any]:
        """The object once its Ready condition has `status`/`reason` and observedGeneration is `generation`."""

        def check() -> dict[str, Any] | None:
            obj = self.get(name)
            condition = ready_condition(obj) if obj else None
            if obj is None or condition is None or obj["status"].get("observedGeneration") != generation:
                return None
            return obj if (condition["status"], condition["reason"]) == (status, reason) else None

        return wait_for(check, timeout_s, f"{self.namespace}/{name} Ready={status} {reason} gen {generation}")

    def wait_ready(self, name: str, generation: int, timeout_s: float = 60) -> dict[str, Any]:
        return self.wait_condition(name, "True", "Published", generation, timeout_s)

    def wait_gone(self, name: str, timeout_s: float = 60) -> None:
        wait_for(lambda: self.get(name) is None, timeout_s, f"{self.namespace}/{name} gone")

    def event_reasons(self, name: str) -> set[str]:
        events = self.core.list_namespaced_event(self.namespace, field_selector=f"involvedObject.name={name}")
        return {event.reason for event in events.items if event.reason is not None}

    def wait_events(self, name: str, *reasons: str, timeout_s: float = 30) -> None:
        """Returns once `name` has events of every one of `reasons`. kopf posts events from a queue of its own, after
        the status it reports: call this while the operator still runs."""
        wanted = set(reasons)
        wait_for(
            lambda: wanted <= self.event_reasons(name), timeout_s, f"{self.namespace}/{name} events {sorted(wanted)}"
        )

    def release_all(self) -> None:
        """Removes finalizers and deletes every FraudRule left, so that no test leaves objects behind."""
        listed = cast(dict[str, Any], self.api.list_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL))
        for item in listed["items"]:
            name = item["metadata"]["name"]
            self.patch(name, {"metadata": {"finalizers": None}})
            if self.get(name) is not None:
                self.delete(name)


@dataclass(frozen=True)
class Record:
    key: str
    value: bytes | None
    offset: int

    @property
    def rule(self) -> dict[str, Any] | None:
        parsed: dict[str, Any] | None = json.loads(self.value) if self.value is not None else None
        return parsed


def read_records(settings: KafkaSettings, topic: str, timeout_s: float = 30) -> list[Record]:
    """Every record of partition 0 of `topic` from its beginning to its current end, read independently."""
    options: dict[str, ConfigValue] = {
        "group.id": f"test-{uuid.uuid4().hex}",
        "enable.partition.eof": True,
        "enable.auto.commit": False,
    }
    consumer = Consumer(settings.client_config(**options))
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=timeout_s)
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        records: list[Record] = []
        position, deadline = 0, time.monotonic() + timeout_s
        while position < high:
            assert time.monotonic() < deadline, f"{topic} not read to offset {high} in {timeout_s}s"
            msg = consumer.poll(0.2)
            if msg is None:
                continue
            error = msg.error()
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                position = max(position, msg.offset() or 0)
                continue
            offset = msg.offset()
            assert offset is not None, f"{topic}: a record without an offset"
            records.append(Record(key_of(msg), msg.value(), offset))
            position = offset + 1
        return records
    finally:
        consumer.close()


def latest_by_key(records: list[Record]) -> dict[str, Record]:
    return {record.key: record for record in records}


def http_get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


@dataclass(frozen=True)
class OperatorHarness:
    """How to run the operator for one test: its namespace (None: all), topic, Kafka, and probe URLs."""

    namespace: str | None
    topic: str
    kafka: KafkaSettings
    liveness_url: str
    metrics_url: str

    @contextmanager
    def running(self, wait_live: bool = True) -> Iterator[KopfRunner]:
        """The operator in a thread, returned once its startup reconciliation is done (liveness answers)."""
        threads_before = {thread.ident for thread in threading.enumerate()}
        scope = ["--all-namespaces"] if self.namespace is None else ["--namespace", self.namespace]
        argv = ["run", "--standalone", *scope, "--liveness", self.liveness_url]
        with KopfRunner([*argv, "-m", "fraudstream_operator.handlers"], timeout=60) as runner:
            if wait_live:
                self.wait_live()
            yield runner
        assert runner.exit_code == 0, runner.output
        assert runner.exception is None, runner.exception

        def no_new_threads() -> bool:
            return all(thread.ident in threads_before for thread in threading.enumerate())

        wait_for(no_new_threads, 10, f"operator threads to end: {threading.enumerate()}")

    def wait_live(self, timeout_s: float = 60) -> None:
        wait_for(lambda: http_get(self.liveness_url), timeout_s, f"operator liveness at {self.liveness_url}")

    def metric(self, line_prefix: str) -> float:
        """The value of the first metrics line starting with `line_prefix` (0 if absent)."""
        for line in http_get(self.metrics_url).splitlines():
            if line.startswith(line_prefix):
                return float(line.rsplit(" ", 1)[1])
        return 0.0


def liveness_answer(url: str) -> dict[str, Any] | None:
    """The JSON a liveness endpoint answers with 200; None when it refuses or does not answer."""
    try:
        answer: dict[str, Any] = json.loads(http_get(url))
    except (OSError, ValueError):
        return None
    return answer


@dataclass(frozen=True)
class OperatorProcess:
    """`python -m fraudstream_operator` as a process of its own, as a pod runs it: one replica under election."""

    identity: str
    process: ManagedProcess
    liveness_url: str
    metrics_url: str

    def leads(self) -> bool:
        """Holds the Lease and finished its startup reconciliation (kopf's liveness answer)."""
        answer = liveness_answer(self.liveness_url)
        return answer is not None and "rulesManaged" in answer

    def standby(self) -> dict[str, Any] | None:
        """The standby's liveness answer, while it is a live standby."""
        answer = liveness_answer(self.liveness_url)
        return answer if answer is not None and answer.get("standby") is True else None

    def metric(self, line_prefix: str) -> float:
        for line in http_get(self.metrics_url).splitlines():
            if line.startswith(line_prefix):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def kill(self) -> None:
        """SIGKILL, by its own pid, as a node failure would; returns once it is reaped."""
        pid = self.process.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: not self.process.alive(), 10, f"{self.identity} (pid {pid}) to die")


def operator_in_new_namespace(
    kubeconfig: Path, kafka: KafkaSettings, topics: Topics, namespace: str, log: Path
) -> tuple[ManagedProcess, str]:
    """Creates `namespace` (after the FraudRule CRD is established) and starts `python -m fraudstream_operator` as a
    process of its own watching it, with its Lease there and its metrics on 127.0.0.1; returns the started process
    and its liveness URL. The caller stops the process and deletes the namespace."""
    install_crd(kubeconfig)
    kubectl(kubeconfig, "create", "namespace", namespace)
    liveness = f"http://127.0.0.1:{free_port()}/healthz"
    env = {
        "KUBECONFIG": str(kubeconfig),
        **kafka.as_env(),
        **topics.as_env(),
        "WATCH_NAMESPACES": namespace,
        "OPERATOR_METRICS_PORT": str(free_port()),
        "OPERATOR_METRICS_ADDR": "127.0.0.1",
        "OPERATOR_LIVENESS_ENDPOINT": liveness,
        "OPERATOR_LEASE_NAME": "fraudstream-operator",
        "OPERATOR_LEASE_NAMESPACE": namespace,
    }
    argv = [sys.executable, "-m", "fraudstream_operator"]
    return ManagedProcess("operator", argv, log, env=env).start(), liveness
