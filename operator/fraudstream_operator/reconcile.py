"""Startup reconciliation of the rules topic against the cluster, before any watch stream starts.

The pipeline: ensure the topic exists, read its latest record per key, list the FraudRules, find the orphans
(keys holding a rule that no FraudRule backs), tombstone them. Republishing FraudRules whose latest record
differs is left to the resume handlers, which compare against the state read here and send only differences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Set

import kopf
from confluent_kafka import KafkaException

from fraudstream_kafka.topics import ensure_topics

from .cluster import list_rule_keys
from .exceptions import KafkaUnavailableError
from .publishing import Sender, tombstone
from .resource import key_namespace
from .rules_producer import RulesProducer
from .runtime import ManagedRules, Runtime
from .settings import OperatorSettings
from .topic_state import TopicState, read_topic


def find_orphans(latest: Mapping[str, bytes | None], live_keys: Set[str], owns: Callable[[str], bool]) -> list[str]:
    """Keys whose latest record is a rule, that this operator owns, and that no FraudRule backs; sorted."""
    return sorted(key for key, value in latest.items() if value is not None and key not in live_keys and owns(key))


def owns_key(settings: OperatorSettings) -> Callable[[str], bool]:
    """Whether a topic key is this operator's: its namespace is watched; a malformed key only when watching all."""

    def owns(key: str) -> bool:
        namespace = key_namespace(key)
        return settings.clusterwide if namespace is None else settings.owns(namespace)

    return owns


def _ensure_rules_topic(settings: OperatorSettings) -> None:
    try:
        ensure_topics(settings.kafka, [settings.rules_topic_spec()], timeout_s=settings.publish_timeout_s)
    except (RuntimeError, KafkaException, TimeoutError) as exc:
        detail = str(exc) or type(exc).__name__
        raise KafkaUnavailableError(f"could not ensure topic {settings.rules_topic}: {detail}") from exc


def tombstone_orphans(
    publisher: Sender, topic: TopicState, live_keys: Set[str], owns: Callable[[str], bool]
) -> list[str]:
    orphans = find_orphans(topic.latest_values(), live_keys, owns)
    for key in orphans:
        tombstone(publisher, topic, key)
    return orphans


def start_runtime(settings: OperatorSettings, logger: kopf.Logger) -> Runtime:
    """Reconciles the topic against the cluster and returns what the handlers share; raises OperatorError."""
    live_keys = list_rule_keys(settings.namespaces)
    _ensure_rules_topic(settings)
    topic = read_topic(settings.kafka, settings.rules_topic, settings.publish_timeout_s)
    publisher = RulesProducer(settings.kafka, settings.rules_topic, settings.publish_timeout_s)
    try:
        orphans = tombstone_orphans(publisher, topic, live_keys, owns_key(settings))
    except BaseException:
        publisher.close()
        raise
    logger.info(
        f"topic {settings.rules_topic}: {len(topic.latest_values())} keys read, {len(live_keys)} FraudRules listed, "
        f"{len(orphans)} orphans tombstoned: {orphans}"
    )
    return Runtime(settings=settings, publisher=publisher, topic=topic, managed=ManagedRules(live_keys))
