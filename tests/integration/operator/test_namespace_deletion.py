"""Namespace deletion on the local stack's control plane: kube-controller-manager runs beside kube-apiserver, so
deleting a namespace deletes its FraudRules, as on any cluster, and (through the operator's finalizer) takes their
rules off the rules topic, so that the detector stops applying them."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_localstack.processes import wait_for
from tests.integration.operator.conftest import configure_operator
from tests.integration.operator.harness import (
    BASE_SPEC,
    GROUP,
    PLURAL,
    VERSION,
    FraudRules,
    OperatorHarness,
    latest_by_key,
    read_records,
)
from tests.kube_helpers import new_namespace

pytestmark = pytest.mark.integration


def _namespace_gone(core: client.CoreV1Api, name: str) -> bool:
    try:
        core.read_namespace(name)
    except client.ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return False


@pytest.fixture
def doomed_namespace(kube_api: client.ApiClient, fraudrule_crd: None) -> Iterator[str]:
    """A namespace the test deletes itself; cleaned up here only if the test failed before it was gone."""
    name = f"doomed-{uuid.uuid4().hex[:10]}"
    core = client.CoreV1Api(kube_api)
    core.create_namespace(new_namespace(name))
    yield name
    if not _namespace_gone(core, name):
        FraudRules(kube_api, name).release_all()
        with contextlib.suppress(client.ApiException):
            core.delete_namespace(name)


def test_deleting_a_namespace_deletes_its_fraudrules(kube_api: client.ApiClient, doomed_namespace: str) -> None:
    rules = FraudRules(kube_api, doomed_namespace)
    rules.create("sum-24h", BASE_SPEC)
    rules.create("count-1h", {**BASE_SPEC, "aggregatorFunctionType": "COUNT", "windowMinutes": 60, "limit": 5})
    core = client.CoreV1Api(kube_api)

    core.delete_namespace(doomed_namespace)

    wait_for(lambda: _namespace_gone(core, doomed_namespace), 120, f"namespace {doomed_namespace} to be deleted")
    listed = rules.api.list_namespaced_custom_object(GROUP, VERSION, doomed_namespace, PLURAL)
    assert isinstance(listed, dict) and listed["items"] == []


def test_a_deleted_namespace_s_rules_leave_the_rules_topic(
    kube_api: client.ApiClient,
    doomed_namespace: str,
    monkeypatch: pytest.MonkeyPatch,
    kubeconfig: Path,
    kafka_settings: KafkaSettings,
    unique_topics: Topics,
) -> None:
    liveness, metrics = configure_operator(
        monkeypatch, kubeconfig, kafka_settings, unique_topics.rules, doomed_namespace
    )
    operator = OperatorHarness(doomed_namespace, unique_topics.rules, kafka_settings, liveness, metrics)
    rules = FraudRules(kube_api, doomed_namespace)
    core = client.CoreV1Api(kube_api)
    key = f"{doomed_namespace}/sum-24h"
    with operator.running():
        rules.create("sum-24h", BASE_SPEC)
        rules.wait_ready("sum-24h", generation=1)
        assert latest_by_key(read_records(kafka_settings, unique_topics.rules))[key].value is not None

        core.delete_namespace(doomed_namespace)

        wait_for(lambda: _namespace_gone(core, doomed_namespace), 120, f"namespace {doomed_namespace} to be deleted")
    assert latest_by_key(read_records(kafka_settings, unique_topics.rules))[key].value is None  # a tombstone
