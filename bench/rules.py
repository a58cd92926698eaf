"""The benchmark's rule set: N FraudRules of mixed kinds (every aggregate, five key groups, filters, windows
from 5 minutes to 30 days). Limits are set per key group so that alerts come mostly from the generator's
injected fraud bursts and large amounts, as real rules would: an alert for a few percent of
transactions at most, not for every one."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

KEY_GROUPS = (
    ["payerId"],
    ["beneficiaryId"],
    ["payerId", "beneficiaryId"],
    ["paymentType"],
    ["payerId", "paymentType"],
)
# (aggregate, field, operator, limit) for account-level key groups: each trips on the fraud bursts
# (three payments of 60 000-90 000 to a fresh beneficiary).
KINDS: tuple[tuple[str, str | None, str, str], ...] = (
    ("SUM", "paymentAmount", "GREATER", "200000"),
    ("MAX", "paymentAmount", "GREATER_EQUAL", "60000"),
    ("COUNT", None, "GREATER_EQUAL", "3"),
    ("AVG", "paymentAmount", "GREATER", "20000"),
    ("MIN", "paymentAmount", "GREATER_EQUAL", "60000"),
)
# paymentType has two values, so each of its groups sees half the traffic: limits scale with that.
PAYMENT_TYPE_LIMITS = {"SUM": "1000000000", "MAX": "250000", "COUNT": "10000000", "AVG": "20000", "MIN": "60000"}
HOT_ACCOUNT_SUM_LIMIT = "1000000000"
COUNT_FILTER = {"field": "paymentAmount", "operator": "GREATER_EQUAL", "value": "50000"}
WINDOWS_MIN = (5, 60, 1440, 10080, 43200)


def rule_manifests(count: int, namespace: str = "default") -> list[dict[str, Any]]:
    """`count` FraudRule objects, deterministic for a given count."""
    combos = itertools.cycle(itertools.product(KINDS, KEY_GROUPS))
    manifests = []
    for i in range(count):
        (agg, field, op, limit), keys = next(combos)
        spec: dict[str, Any] = {
            "groupingKeyNames": keys,
            "aggregatorFunctionType": agg,
            "limitOperatorType": op,
            "limit": limit,
            "windowMinutes": WINDOWS_MIN[i % len(WINDOWS_MIN)],
        }
        if field:
            spec["aggregateFieldName"] = field
        if "paymentType" in keys and keys != ["payerId", "paymentType"]:
            spec["limit"] = PAYMENT_TYPE_LIMITS[agg]
        elif agg == "SUM" and keys != ["payerId", "beneficiaryId"]:
            # Zipf makes the busiest payers and beneficiaries move millions a day: a burst-sized SUM limit would
            # fire on every one of their payments. Only the pair's sum is burst-sized.
            spec["limit"] = HOT_ACCOUNT_SUM_LIMIT
        filters = [COUNT_FILTER] if agg == "COUNT" else []
        if i % 7 == 3:
            filters.append({"field": "paymentType", "operator": "EQUAL", "value": "CRD"})
        if filters:
            spec["filters"] = filters
        manifests.append(
            {
                "apiVersion": "fraudstream.io/v1alpha1",
                "kind": "FraudRule",
                "metadata": {"name": f"bench-{i:03d}-{agg.lower()}", "namespace": namespace},
                "spec": spec,
            }
        )
    return manifests


def write_manifests(directory: Path, count: int) -> Path:
    import json

    directory.mkdir(parents=True, exist_ok=True)
    for manifest in rule_manifests(count):
        (directory / f"{manifest['metadata']['name']}.json").write_text(json.dumps(manifest))
    return directory
