"""The benchmark's rule sets, one per workload profile (fraudstream_generator.workload.Profile).

- `default`: N FraudRules of mixed kinds (every aggregate, five key groups, filters, windows from 5 minutes to
  30 days). Limits are set per key group so that alerts come from the generator's injected fraud bursts, as real
  rules would: an alert for a few percent of transactions at most, not for every one, and at a steady rate. No
  group's ordinary traffic (the Zipf accounts, not the bursts) reaches a SUM limit within a day at 1 000 tx/s, so a
  soak's alert rate does not climb as its long windows fill (tests/unit/bench/test_rules.py holds the arithmetic).
  The one exception is deliberate: the payer's 5-minute SUM counts only payments above 2 000 (about 1% of ordinary
  ones) and alerts on each, a stream of alerts from ordinary traffic, steady and spread in time, without which the
  soak's stall measure (a silence in alert output while a transaction waits) would see a transition only where it
  met a burst.
- `flink-demo`: the six rules of the Flink fraud-detection demo, for the generator's flink-demo transactions.

`with_window_precision` gives every rule of a day or more `windowPrecisionSeconds` (CONTRACT section 4).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fraudstream_generator.workload import Profile as Profile  # re-exported for bench.run
from fraudstream_rules.exceptions import InvalidRuleError
from fraudstream_rules.model import parse_spec

KEY_GROUPS = (
    ["payerId"],
    ["beneficiaryId"],
    ["payerId", "beneficiaryId"],
    ["paymentType"],
    ["payerId", "paymentType"],
)
# (aggregate, field, operator, limit) for account-level key groups: each trips on the fraud bursts
# (three payments of 60 000-90 000 to a fresh beneficiary). SUM's limit and filters depend on the key group
# (SUM_BY_KEYS); its burst-sized limit here is the pair's.
BURST_SUM_LIMIT = "200000"
KINDS: tuple[tuple[str, str | None, str, str], ...] = (
    ("SUM", "paymentAmount", "GREATER", BURST_SUM_LIMIT),
    ("MAX", "paymentAmount", "GREATER_EQUAL", "60000"),
    ("COUNT", None, "GREATER_EQUAL", "3"),
    ("AVG", "paymentAmount", "GREATER", "20000"),
    ("MIN", "paymentAmount", "GREATER_EQUAL", "60000"),
)
# paymentType has two values, so each of its groups sees a third or more of all traffic (and of the bursts): limits
# scale with that.
PAYMENT_TYPE_LIMITS = {"SUM": "100000000000", "MAX": "250000", "COUNT": "10000000", "AVG": "20000", "MIN": "60000"}
LARGE_PAYMENT = {"field": "paymentAmount", "operator": "GREATER_EQUAL", "value": "50000"}
ABOVE_2000 = {"field": "paymentAmount", "operator": "GREATER", "value": "2000"}
# The SUM rules of the account-level key groups: (limit, filters). Zipf makes the busiest payers and beneficiaries
# move billions a day, so their SUM limits are far above that. The pair's SUM counts large payments only and is
# burst-sized: Zipf payers and beneficiaries drawn independently make the hottest pairs move 200 000 in under a
# minute, so an unfiltered pair SUM would fire on each of their payments. The payer's counts payments above 2 000
# only, each of which then alerts by itself.
SUM_BY_KEYS: dict[tuple[str, ...], tuple[str, list[dict[str, str]]]] = {
    ("payerId",): ("2000", [ABOVE_2000]),
    ("beneficiaryId",): ("10000000000", []),
    ("payerId", "beneficiaryId"): (BURST_SUM_LIMIT, [LARGE_PAYMENT]),
    ("payerId", "paymentType"): ("10000000000", []),
}
WINDOWS_MIN = (5, 60, 1440, 10080, 43200)


def _spec(keys: list[str], agg: str, field: str | None, op: str, limit: str, minutes: int) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "groupingKeyNames": keys,
        "aggregatorFunctionType": agg,
        "limitOperatorType": op,
        "limit": limit,
        "windowMinutes": minutes,
    }
    if field:
        spec["aggregateFieldName"] = field
    return spec


def _fraud_rule(name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "fraudstream.io/v1alpha1",
        "kind": "FraudRule",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def rule_manifests(count: int, namespace: str = "default") -> list[dict[str, Any]]:
    """`count` FraudRule objects, deterministic for a given count."""
    combos = itertools.cycle(itertools.product(KINDS, KEY_GROUPS))
    manifests = []
    for i in range(count):
        (agg, field, op, limit), keys = next(combos)
        spec = _spec(keys, agg, field, op, limit, WINDOWS_MIN[i % len(WINDOWS_MIN)])
        filters = [LARGE_PAYMENT] if agg == "COUNT" else []
        if keys == ["paymentType"]:
            spec["limit"] = PAYMENT_TYPE_LIMITS[agg]
        elif agg == "SUM":
            spec["limit"], sum_filters = SUM_BY_KEYS[tuple(keys)]
            filters = list(sum_filters)
        if i % 7 == 3:
            filters.append({"field": "paymentType", "operator": "EQUAL", "value": "CRD"})
        if filters:
            spec["filters"] = filters
        manifests.append(_fraud_rule(f"bench-{i:03d}-{agg.lower()}", namespace, spec))
    return manifests


# The Flink fraud-detection demo's six rules: (name, grouping keys, aggregate, field, operator, limit, minutes).
FLINK_DEMO_RULES: tuple[tuple[str, list[str], str, str | None, str, str, int], ...] = (
    ("payee-sum-10m", ["payeeId"], "SUM", "paymentAmount", "GREATER", "1500", 10),
    ("beneficiary-count-5m", ["beneficiaryId"], "COUNT", None, "GREATER_EQUAL", "4", 5),
    ("payee-beneficiary-sum-30m", ["payeeId", "beneficiaryId"], "SUM", "paymentAmount", "GREATER", "500", 30),
    ("payee-max-1m", ["payeeId"], "MAX", "paymentAmount", "GREATER", "600", 1),
    ("beneficiary-min-5m", ["beneficiaryId"], "MIN", "paymentAmount", "LESS", "0.5", 5),
    ("payee-count-15m", ["payeeId"], "COUNT", None, "GREATER_EQUAL", "3", 15),
)
DEFAULT_COUNT = 50
# Rules with windows this long or longer are the ones `with_window_precision` buckets.
PRECISION_MIN_WINDOW_MINUTES = 1440


def flink_demo_manifests(namespace: str = "default") -> list[dict[str, Any]]:
    """The Flink demo's six rules as FraudRule objects (limits as decimal strings, so they stay exact)."""
    return [
        _fraud_rule(f"flink-demo-{i}-{name}", namespace, _spec(keys, agg, field, op, limit, minutes))
        for i, (name, keys, agg, field, op, limit, minutes) in enumerate(FLINK_DEMO_RULES, start=1)
    ]


def with_window_precision(manifests: Sequence[dict[str, Any]], precision_s: int | None) -> list[dict[str, Any]]:
    """Copies of `manifests` in which every rule whose window is at least a day gets `windowPrecisionSeconds:
    precision_s`; shorter rules, and every rule when `precision_s` is None, stay exact. The inputs are not changed."""
    out = [copy.deepcopy(m) for m in manifests]
    if precision_s is not None:
        for manifest in out:
            if manifest["spec"]["windowMinutes"] >= PRECISION_MIN_WINDOW_MINUTES:
                manifest["spec"]["windowPrecisionSeconds"] = precision_s
    return out


def benchmark_manifests(profile: Profile, count: int, precision_s: int | None = None) -> list[dict[str, Any]]:
    """The profile's rules (`count` of them for the default profile; flink-demo has its six), with the window
    precision applied. Raises InvalidRuleError, naming the rule and the field, when a
    rule is not valid for the project's rule model (e.g. a precision that does not divide a window)."""
    rules = flink_demo_manifests() if profile is Profile.FLINK_DEMO else rule_manifests(count)
    manifests = with_window_precision(rules, precision_s)
    for manifest in manifests:
        try:
            parse_spec(manifest["spec"])
        except InvalidRuleError as exc:
            raise InvalidRuleError(f"{manifest['metadata']['name']}: {exc}") from exc
    return manifests


def write_manifests(directory: Path, manifests: Sequence[dict[str, Any]]) -> Path:
    """Writes each manifest as `<name>.json` into `directory` (for the operator to apply); returns `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    for manifest in manifests:
        (directory / f"{manifest['metadata']['name']}.json").write_text(json.dumps(manifest))
    return directory


def for_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The rules bench.run's options `--profile`, `--rules` and `--window-precision-seconds` ask for; options that
    cannot make valid rules end the run with a usage error (`parser.error`) before anything starts."""
    if args.profile is Profile.FLINK_DEMO and args.rules is not None:
        parser.error("--rules applies to the default profile; flink-demo runs the Flink demo's six rules")
    try:
        return benchmark_manifests(args.profile, args.rules or DEFAULT_COUNT, args.window_precision_seconds)
    except InvalidRuleError as exc:
        parser.error(f"--window-precision-seconds {args.window_precision_seconds}: {exc}")
