"""Startup reconciliation: which keys of the topic are orphans of this operator."""

from __future__ import annotations

import pytest

from fraudstream_operator.reconcile import find_orphans, owns_key
from fraudstream_operator.resource import key_namespace, rule_key
from fraudstream_operator.settings import OperatorSettings

RULE = b'{"ruleId": "..."}'


@pytest.mark.parametrize(
    ("latest", "live", "namespaces", "orphans"),
    [
        pytest.param({}, set(), (), [], id="empty-topic"),
        pytest.param({"a/x": RULE}, {"a/x"}, (), [], id="backed-by-a-rule"),
        pytest.param({"a/x": RULE, "a/y": RULE}, {"a/x"}, (), ["a/y"], id="one-orphan"),
        pytest.param({"a/x": None}, set(), (), [], id="already-tombstoned"),
        pytest.param({"b/z": RULE, "a/y": RULE}, set(), (), ["a/y", "b/z"], id="sorted"),
        pytest.param({"a/y": RULE, "b/z": RULE}, set(), ("a",), ["a/y"], id="other-namespace-not-ours"),
        pytest.param({"junk": RULE}, set(), (), ["junk"], id="malformed-key-when-watching-all"),
        pytest.param({"junk": RULE, "/x": RULE}, set(), ("a",), [], id="malformed-key-when-watching-some"),
        pytest.param({"a/x": RULE}, {"a/x", "a/never-published"}, (), [], id="live-rule-not-on-topic"),
    ],
)
def test_find_orphans(
    latest: dict[str, bytes | None], live: set[str], namespaces: tuple[str, ...], orphans: list[str]
) -> None:
    assert find_orphans(latest, live, owns_key(OperatorSettings(namespaces=namespaces))) == orphans


@pytest.mark.parametrize(
    ("key", "namespace"),
    [("payments/big", "payments"), ("payments/", None), ("/big", None), ("nokey", None), ("a/b/c", "a"), ("", None)],
)
def test_key_namespace(key: str, namespace: str | None) -> None:
    assert key_namespace(key) == namespace


def test_rule_key_is_namespace_slash_name() -> None:
    assert rule_key("payments", "big-transfers") == "payments/big-transfers"
