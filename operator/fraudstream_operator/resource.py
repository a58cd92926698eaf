"""The FraudRule resource and how its objects map to keys of the rules topic (CONTRACT section 2)."""

from __future__ import annotations

GROUP = "fraudstream.io"
VERSION = "v1alpha1"
PLURAL = "fraudrules"
KIND = "FraudRule"


def rule_key(namespace: str, name: str) -> str:
    """The topic key, and the `ruleId`, of a FraudRule: `namespace/name`."""
    return f"{namespace}/{name}"


def key_namespace(key: str) -> str | None:
    """The namespace part of a topic key; None for a key that is not `namespace/name`."""
    namespace, slash, name = key.partition("/")
    return namespace if slash and namespace and name else None
