"""The least-privilege grants per component, as data, as AclBindings and as kafka-acls.sh commands."""

from __future__ import annotations

from confluent_kafka.admin import AclOperation, ResourcePatternType, ResourceType

from fraudstream_kafka.acls import Acl, Component, Operation, Resource, all_acls, component_acls
from fraudstream_kafka.settings import Topics

TOPICS = Topics("tx", "r", "a", "d")


def grants(component: Component) -> set[tuple[str, str, str, bool]]:
    return {
        (a.resource.value, a.name, a.operation.value, a.prefixed) for a in component_acls(component, "User:x", TOPICS)
    }


def test_the_operator_reads_and_writes_rules_and_uses_its_own_groups_only() -> None:
    assert grants(Component.OPERATOR) == {
        ("topic", "r", "Write", False),
        ("topic", "r", "Read", False),
        ("group", "fraudstream-operator", "Read", True),
    }


def test_the_detector_reads_inputs_writes_outputs_describes_configs_and_uses_its_own_groups_only() -> None:
    assert grants(Component.DETECTOR) == {
        ("topic", "tx", "Read", False),
        ("topic", "r", "Read", False),
        ("topic", "a", "Write", False),
        ("topic", "d", "Write", False),
        *{("topic", name, "DescribeConfigs", False) for name in ("tx", "r", "a", "d")},
        ("group", "fraudstream-detector", "Read", True),
    }


def test_the_generator_writes_transactions_only() -> None:
    assert grants(Component.GENERATOR) == {("topic", "tx", "Write", False)}


def test_nobody_may_create_topics_or_write_what_it_should_not() -> None:
    acls = all_acls({c: f"User:{c.value}" for c in Component}, TOPICS)
    writers = {(a.principal, a.name) for a in acls if a.operation is Operation.WRITE}
    assert writers == {("User:operator", "r"), ("User:detector", "a"), ("User:detector", "d"), ("User:generator", "tx")}
    assert {a.operation for a in acls} == {Operation.READ, Operation.WRITE, Operation.DESCRIBE_CONFIGS}


def test_a_grant_becomes_a_binding_and_a_kafka_acls_command() -> None:
    acl = Acl("User:detector", Resource.GROUP, "fraudstream-detector", Operation.READ, prefixed=True)
    binding = acl.binding()
    assert (binding.restype, binding.name, binding.resource_pattern_type, binding.principal, binding.host) == (
        ResourceType.GROUP, "fraudstream-detector", ResourcePatternType.PREFIXED, "User:detector", "*"
    )  # fmt: skip
    assert binding.operation == AclOperation.READ
    assert acl.command() == (
        "kafka-acls.sh --bootstrap-server $KAFKA_BOOTSTRAP --command-config $KAFKA_COMMAND_CONFIG --add "
        "--allow-principal User:detector --operation Read --group fraudstream-detector --resource-pattern-type prefixed"
    )
    literal = Acl("User:op", Resource.TOPIC, "rules", Operation.WRITE).command("b:9", "/admin.properties")
    assert literal.endswith("--operation Write --topic rules") and "b:9" in literal


def test_docs_security_lists_exactly_each_components_grants_and_the_topics_to_create() -> None:
    from fraudstream_kafka.topics import contract_topics
    from fraudstream_localstack.layout import ROOT

    lines = (ROOT / "docs" / "security.md").read_text().splitlines()
    documented = [line for line in lines if line.startswith("kafka-acls.sh ")]
    principals = {c: f"User:fraudstream-{c.value}" for c in Component}
    assert documented == [acl.command() for acl in all_acls(principals, Topics())]
    creates = {line.split("--topic ")[1].split()[0]: line for line in lines if line.startswith("kafka-topics.sh ")}
    specs = contract_topics(Topics())
    assert set(creates) == {spec.name for spec in specs}
    for spec in specs:
        assert f"--partitions {spec.partitions}" in creates[spec.name]
        assert [f"--config {k}={v}" in creates[spec.name] for k, v in spec.config] == [True] * len(spec.config)
