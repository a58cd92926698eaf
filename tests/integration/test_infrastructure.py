"""The infrastructure under every integration test is real: broker, API server and Spark all answer."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource
from kubernetes import client, watch

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import contract_topics, ensure_topics
from fraudstream_localstack.processes import wait_for
from tests.kafka_helpers import consume_until, key_of, produce, text_of
from tests.kube_helpers import api_client

pytestmark = pytest.mark.integration


def test_kafka_produce_consume_round_trip(kafka_settings: KafkaSettings, unique_topics: Topics) -> None:
    ensure_topics(kafka_settings, contract_topics(unique_topics))
    sent = [(f"k{i}", json.dumps({"i": i})) for i in range(20)]
    produce(kafka_settings, unique_topics.transactions, sent)

    got = consume_until(kafka_settings, unique_topics.transactions, lambda ms: len(ms) >= 20)

    assert sorted((key_of(m), text_of(m)) for m in got) == sorted(sent)


def test_rules_topic_is_compacted_and_reads_back_latest_per_key(
    kafka_settings: KafkaSettings, unique_topics: Topics
) -> None:
    ensure_topics(kafka_settings, contract_topics(unique_topics))
    admin = AdminClient(kafka_settings.client_config())
    resource = ConfigResource(ConfigResource.Type.TOPIC, unique_topics.rules)
    configs = admin.describe_configs([resource])[resource].result(timeout=10)
    assert configs["cleanup.policy"].value == "compact"

    produce(kafka_settings, unique_topics.rules, [("ns/a", "v1"), ("ns/b", "v1"), ("ns/a", "v2"), ("ns/b", None)])
    got = consume_until(kafka_settings, unique_topics.rules, lambda ms: len(ms) >= 4)
    latest = {key_of(m): m.value() for m in got}
    assert latest == {"ns/a": b"v2", "ns/b": None}


def test_ensure_topics_is_idempotent(kafka_settings: KafkaSettings, unique_topics: Topics) -> None:
    ensure_topics(kafka_settings, contract_topics(unique_topics))
    ensure_topics(kafka_settings, contract_topics(unique_topics))
    names = AdminClient(kafka_settings.client_config()).list_topics(timeout=10).topics
    assert {unique_topics.transactions, unique_topics.rules, unique_topics.alerts, unique_topics.dlq} <= set(names)


WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.infra.fraudstream.io"},
    "spec": {
        "group": "infra.fraudstream.io",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size"],
                                "properties": {"size": {"type": "integer", "minimum": 1}},
                            }
                        },
                    }
                },
            }
        ],
    },
}


def test_apiserver_serves_a_crd_and_its_custom_resources(kubeconfig: Path) -> None:
    api = api_client(kubeconfig)
    crd = client.V1CustomResourceDefinition.from_dict(WIDGET_CRD)
    assert crd is not None
    client.ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    objects = client.CustomObjectsApi(api)

    def established() -> bool:
        crd = client.ApiextensionsV1Api(api).read_custom_resource_definition(WIDGET_CRD["metadata"]["name"])
        conditions = crd.status.conditions if crd.status else None
        return any(c.type == "Established" and c.status == "True" for c in conditions or [])

    wait_for(established, 30, "widget CRD established")
    # Established can come before the resource is served: the watch below has no retry of its own.
    wait_for(
        lambda: objects.list_namespaced_custom_object("infra.fraudstream.io", "v1", "default", "widgets"),
        30,
        "widgets served",
    )
    seen: list[str] = []
    stream = watch.Watch()

    def watch_widgets() -> None:
        for event in stream.stream(
            objects.list_namespaced_custom_object,
            "infra.fraudstream.io",
            "v1",
            "default",
            "widgets",
            timeout_seconds=30,
        ):
            seen.append(f"{event['type']}:{event['object']['metadata']['name']}")
            if len(seen) >= 1:
                stream.stop()

    watcher = threading.Thread(target=watch_widgets)
    watcher.start()
    name = f"w-{uuid.uuid4().hex[:6]}"
    body = {
        "apiVersion": "infra.fraudstream.io/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"size": 3},
    }
    wait_for(
        lambda: objects.create_namespaced_custom_object("infra.fraudstream.io", "v1", "default", "widgets", body),
        30,
        "widget create",
    )
    read = objects.get_namespaced_custom_object("infra.fraudstream.io", "v1", "default", "widgets", name)
    assert isinstance(read, dict)
    watcher.join(timeout=30)

    assert read["spec"] == {"size": 3}
    assert f"ADDED:{name}" in seen
    with pytest.raises(client.ApiException) as refused:
        objects.create_namespaced_custom_object(
            "infra.fraudstream.io",
            "v1",
            "default",
            "widgets",
            {**body, "metadata": {"name": name + "-bad"}, "spec": {"size": 0}},
        )
    assert refused.value.status == 422


def test_apiserver_enforces_rbac_for_unprivileged_users(kube: object, kubeconfig: Path) -> None:
    api = api_client(kubeconfig)
    request = client.V1SubjectAccessReview(
        api_version="authorization.k8s.io/v1",
        kind="SubjectAccessReview",
        spec=client.V1SubjectAccessReviewSpec(
            user="nobody", resource_attributes=client.V1ResourceAttributes(verb="list", resource="secrets")
        ),
    )
    review = client.AuthorizationV1Api(api).create_subject_access_review(request)
    assert review.status is not None and review.status.allowed is False


def test_spark_streams_from_and_to_the_real_broker(
    spark: object, kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path
) -> None:
    from pyspark.sql import SparkSession

    assert isinstance(spark, SparkSession)
    ensure_topics(kafka_settings, contract_topics(unique_topics))
    produce(kafka_settings, unique_topics.transactions, [(f"k{i}", f"v{i}") for i in range(10)])
    options = kafka_settings.spark_options()
    query = (
        spark.readStream.format("kafka")
        .options(**options)
        .option("subscribe", unique_topics.transactions)
        .option("startingOffsets", "earliest")
        .load()
        .selectExpr("key", "upper(CAST(value AS STRING)) AS value")
        .writeStream.format("kafka")
        .options(**options)
        .option("topic", unique_topics.alerts)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .start()
    )
    try:
        got = consume_until(kafka_settings, unique_topics.alerts, lambda ms: len(ms) >= 10, timeout_s=120)
    finally:
        query.stop()
    assert sorted(text_of(m) for m in got) == sorted(f"V{i}" for i in range(10))
