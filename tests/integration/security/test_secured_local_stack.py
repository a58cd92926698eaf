"""`make run KAFKA_SECURITY=sasl_ssl`: the whole local stack (operator with the example rules, detector, generator)
on a secured broker of its own, each component as its own principal; the ACLs it creates are exactly each
component's; `.local/stack.env` (owner-only) lets the user's Kafka tools in as the admin."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from fraudstream_kafka.acls import Component, all_acls
from fraudstream_localstack.components import detector, generator, metric_value
from fraudstream_localstack.kafka_security import ADMIN, COMPONENT_USERS, KafkaSecurity
from fraudstream_localstack.layout import ROOT, write_env_file
from fraudstream_localstack.operator_component import OperatorComponent
from fraudstream_localstack.processes import wait_for
from fraudstream_localstack.stack import Component as StackComponent
from fraudstream_localstack.stack import LocalStack, StackConfig

pytestmark = pytest.mark.integration

EVALUATED = 'fraud_transactions_total{outcome="evaluated"}'


def acls_on_broker(stack: LocalStack) -> set[tuple[object, ...]]:
    admin = AdminClient(stack.kafka_settings.client_config())
    # None matches any name, principal and host (the stubs say str).
    everything = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,  # type: ignore[arg-type]
                                  AclOperation.ANY, AclPermissionType.ANY)  # fmt: skip
    bindings = admin.describe_acls(everything, request_timeout=30).result(timeout=30)
    return {(b.restype, b.name, b.resource_pattern_type, b.principal, b.operation) for b in bindings}


def test_the_whole_local_stack_runs_secured_each_component_as_its_own_principal(tmp_path: Path) -> None:
    config = StackConfig.isolated(tmp_path, kafka_security=KafkaSecurity.SASL_SSL)
    components: list[StackComponent] = [
        OperatorComponent(),
        detector(config, tmp_path / "checkpoint", log_dir=tmp_path),
        generator(rate=50, log_dir=tmp_path),
    ]
    stack = LocalStack(config, components)
    try:
        stack.start()
        # The generator writes as its principal, the detector reads as its own: transactions get evaluated.
        detector_url = stack.env()["DETECTOR_EVALUATOR_METRICS_URL"]
        wait_for(lambda: metric_value(detector_url, EVALUATED) or None, 120, "generated transactions evaluated", 0.5)
        on_broker = acls_on_broker(stack)
        write_env_file(tmp_path / "stack.env", stack.env())
        listed = subprocess.run(
            ["bash", "-c", f'source {tmp_path / "stack.env"} && scripts/kafka-topics.sh --bootstrap-server '
                           '"$KAFKA_BOOTSTRAP" --list'],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        envs = {component: stack.component_env(component) for component in Component}
    finally:
        stack.stop()

    principals = {component: f"User:{user}" for component, user in COMPONENT_USERS.items()}
    expected = {
        (b.restype, b.name, b.resource_pattern_type, b.principal, b.operation)
        for b in (acl.binding() for acl in all_acls(principals, config.topics))
    }
    assert on_broker == expected
    assert stat.S_IMODE(os.stat(tmp_path / "stack.env").st_mode) == 0o600
    assert listed.returncode == 0, listed.stderr
    assert set(config.topics.as_env().values()) <= set(listed.stdout.split())
    admin_password = stack.kafka_settings.client_properties["sasl.password"]
    for component, env in envs.items():
        assert env["KAFKA_CLIENT_SASL_USERNAME"] == COMPONENT_USERS[component]
        assert admin_password not in env.values() and "KAFKA_COMMAND_CONFIG" not in env
    assert stack.kafka_settings.client_properties["sasl.username"] == ADMIN
