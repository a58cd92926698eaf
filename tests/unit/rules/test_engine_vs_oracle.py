"""Property tests: the incremental Detector agrees exactly with the brute-force oracle."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraudstream_rules.decimals import canonical_decimal
from fraudstream_rules.engine import Detector, GroupStore, GroupWindow, InMemoryGroupStore
from fraudstream_rules.model import Rule, parse_rule_message, parse_spec
from fraudstream_rules.transactions import Transaction, parse_transaction

from .oracle import Outcome, Record, RuleRecord, run_oracle

T0_MS = 1_700_000_000_000
KEY_GROUPS = (["payerId"], ["beneficiaryId"], ["payerId", "beneficiaryId"])
FILTERS: tuple[list[dict[str, object]], ...] = (
    [],
    [],
    [{"field": "paymentType", "operator": "EQUAL", "value": "CRD"}],
    [{"field": "paymentAmount", "operator": "GREATER", "value": "0.1"}],
    [{"field": "paymentType", "operator": "IN", "value": ["CRD", "CSH"]}],
    [{"field": "channel", "operator": "NOT_EQUAL", "value": "web"}],
    [
        {"field": "fee", "operator": "LESS_EQUAL", "value": 1},
        {"field": "paymentType", "operator": "NOT_IN", "value": ["CSH"]},
    ],
)
LIMITS: tuple[object, ...] = ("0", "0.3", "0.6", "1", 2, 3, "10.1")
AMOUNTS = ("0.1", "0.2", "0.3", "0.10", "1", "2", "10", "-0.5", '"0.2"', '"abc"', None, "null")
EVENT_TIME_STEPS_MS = (-60_000, -30_000, -1, 0, 0, 1, 10_000, 30_000, 30_000, 60_000, 60_000, 90_000)
INGEST_STEPS_MS = (-3_000, 0, 1, 500, 1_000, 1_000, 5_000)
RULE_IDS = ("ns/a", "ns/b", "ns/c")
OPERATORS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")


FRESH_SPECS = st.fixed_dictionaries(
    {
        "state": st.sampled_from(["ACTIVE", "ACTIVE", "ACTIVE", "PAUSE"]),
        "groupingKeyNames": st.sampled_from(KEY_GROUPS),
        "aggregatorFunctionType": st.sampled_from(["SUM", "COUNT", "AVG", "MIN", "MAX"]),
        "aggregateFieldName": st.sampled_from(["paymentAmount", "paymentAmount", "fee"]),
        "limitOperatorType": st.sampled_from(OPERATORS),
        "limit": st.sampled_from(LIMITS),
        "windowMinutes": st.integers(1, 5),
        "filters": st.sampled_from(FILTERS),
    }
)
CHANGES = st.sampled_from(["state", "state", "limit", "operator", "window", "aggregator", "identity"])
IDENTITY_PARTS = st.sampled_from(["groupingKeyNames", "aggregateFieldName", "filters"])
ACTIONS = st.sampled_from(["create", "update", "update", "update", "delete", "recreate"])


@st.composite
def updated_specs(draw: st.DrawFn, spec: dict[str, object]) -> dict[str, object]:
    """`spec` with one thing changed; most changes keep the window identity."""
    changed = dict(spec)
    what = draw(CHANGES)
    fresh = draw(FRESH_SPECS)
    if what == "state":
        changed["state"] = "PAUSE" if spec["state"] == "ACTIVE" else "ACTIVE"
    elif what == "limit":
        changed["limit"] = fresh["limit"]
    elif what == "operator":
        changed["limitOperatorType"] = fresh["limitOperatorType"]
    elif what == "window":
        changed["windowMinutes"] = fresh["windowMinutes"]
    elif what == "aggregator":
        if spec["aggregatorFunctionType"] != "COUNT" and fresh["aggregatorFunctionType"] != "COUNT":
            changed["aggregatorFunctionType"] = fresh["aggregatorFunctionType"]
    else:
        key = draw(IDENTITY_PARTS)
        changed[key] = fresh[key]
    return changed


def _field(name: str, literal: str | None) -> str:
    return "" if literal is None else f'"{name}":{literal}'


def _template(*parts: str) -> str:
    return "{" + ",".join(part for part in parts if part) + "}"


TRANSACTION_TEMPLATES = st.builds(
    lambda tx_id, keys, amount, extras: _template(tx_id, '"eventTime":{t}', keys, amount, extras),
    st.sampled_from(['"transactionId":"t{i}"'] * 3 + ['"transactionId":{i}', ""]),
    st.sampled_from(
        [",".join(p for p in (_field("payerId", payer), _field("beneficiaryId", beneficiary)) if p)
         for payer in ('"p1"', '"p2"', None) for beneficiary in ("1", "2", '"1"', "1.0")]
    ),
    st.sampled_from([_field("paymentAmount", amount) for amount in AMOUNTS[:8] * 4 + AMOUNTS[8:]]),
    st.sampled_from(
        [",".join(p for p in (_field("fee", fee), _field("paymentType", kind), _field("channel", channel)) if p)
         for fee in ("1", "0.5", '"0.25"', None)
         for kind in ('"CRD"', '"CSH"', '"CRD"')
         for channel in ('"web"', '"app"', None)]
    ),
)  # fmt: skip
LATENESS_MS = st.sampled_from([0, 30_000, 60_000, 120_000, 300_000])
KINDS = st.lists(st.sampled_from(["rule", "tx", "tx", "tx", "tx", "tx"]), min_size=10, max_size=60)
INGEST_STEPS = st.sampled_from(INGEST_STEPS_MS)
EVENT_TIME_STEPS = st.sampled_from(EVENT_TIME_STEPS_MS)
RULE_ID_CHOICES = st.sampled_from(RULE_IDS)


@dataclass(frozen=True)
class Scenario:
    lateness_ms: int
    records: tuple[Record, ...]


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """Rule creates/updates/pauses/deletes/re-creates interleaved with disordered transactions."""
    lateness_ms = draw(LATENESS_MS)
    specs: dict[str, dict[str, object]] = {}
    uids: dict[str, str] = {}
    generations: dict[str, int] = {}
    records: list[Record] = []
    event_time_ms, ingest_ts_ms = T0_MS, T0_MS + 5_000
    kinds = ["rule", *draw(KINDS)]
    for index, kind in enumerate(kinds):
        ingest_ts_ms += draw(INGEST_STEPS)
        if kind == "rule":
            rule_id = draw(RULE_ID_CHOICES)
            action = draw(ACTIONS)
            if action == "delete":
                specs.pop(rule_id, None)
                records.append(RuleRecord(rule_id, None, ingest_ts_ms))
                continue
            if rule_id not in specs:
                specs[rule_id] = draw(FRESH_SPECS)
                uids[rule_id] = f"uid-{index}"
            elif action == "create":
                specs[rule_id] = draw(FRESH_SPECS)
            elif action == "update":
                specs[rule_id] = draw(updated_specs(specs[rule_id]))
            else:
                uids[rule_id] = f"uid-{index}"
            generations[rule_id] = generations.get(rule_id, 0) + 1
            rule = Rule(rule_id, generations[rule_id], uids[rule_id], parse_spec(specs[rule_id]))
            records.append(RuleRecord(rule_id, rule, ingest_ts_ms))
        else:
            template = draw(TRANSACTION_TEMPLATES)
            event_time_ms = max(0, event_time_ms + draw(EVENT_TIME_STEPS))
            value = template.replace("{i}", str(index)).replace("{t}", str(event_time_ms)).encode()
            records.append(parse_transaction(value, ingest_ts_ms, partition=index % 3, offset=index))
    return Scenario(lateness_ms, tuple(records))


class BytesGroupStore:
    """Keeps every group only as bytes, as the Spark state store does: each get rebuilds from scratch."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def get(self, group_key: str) -> GroupWindow | None:
        blob = self.blobs.get(group_key)
        return None if blob is None else GroupWindow.from_bytes(blob)

    def put(self, group_key: str, window: GroupWindow) -> None:
        self.blobs[group_key] = window.to_bytes()

    def delete(self, group_key: str) -> None:
        self.blobs.pop(group_key, None)


def run_detector(
    scenario: Scenario,
    store: GroupStore,
    *,
    owns: Callable[[str], bool] = lambda _: True,
    reload_detector: bool = False,
) -> list[Outcome]:
    detector = Detector(lateness_ms=scenario.lateness_ms)
    outcomes = []
    for record in scenario.records:
        if isinstance(record, RuleRecord):
            rule = record.rule if record.rule is None else parse_rule_message(record.rule.to_message_value())
            detector.on_rule(record.rule_id, rule, record.published_ts_ms)
        else:
            assert isinstance(record, Transaction)
            outcome = detector.on_transaction(record, store, detected_at_ms=0, owns=owns)
            alerts = frozenset(
                (alert.rule_id, alert.transaction_id, canonical_decimal(alert.aggregate_value))
                for alert in outcome.alerts
            )
            outcomes.append(Outcome(alerts, outcome.late_groups, outcome.invalid_reason))
        if reload_detector:
            detector = Detector.from_bytes(detector.to_bytes())
    return outcomes


def assert_same(actual: Sequence[Outcome], expected: Sequence[Outcome], scenario: Scenario) -> None:
    assert len(actual) == len(expected)
    transactions = [record for record in scenario.records if isinstance(record, Transaction)]
    for tx, got, want in zip(transactions, actual, expected, strict=True):
        assert got == want, f"transaction {tx.raw!r} at ingest {tx.ingest_ts_ms}"


PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(scenarios())
def test_detector_matches_oracle(scenario: Scenario) -> None:
    assert_same(
        run_detector(scenario, InMemoryGroupStore()), run_oracle(scenario.records, scenario.lateness_ms), scenario
    )


@PROPERTY
@given(scenarios())
def test_detector_matches_oracle_with_state_serialized_after_every_record(scenario: Scenario) -> None:
    actual = run_detector(scenario, BytesGroupStore(), reload_detector=True)
    assert_same(actual, run_oracle(scenario.records, scenario.lateness_ms), scenario)


@PROPERTY
@given(scenarios())
def test_two_shards_together_match_oracle(scenario: Scenario) -> None:
    def shard(number: int) -> Callable[[str], bool]:
        return lambda key: zlib.crc32(key.encode()) % 2 == number

    first = run_detector(scenario, InMemoryGroupStore(), owns=shard(0))
    second = run_detector(scenario, BytesGroupStore(), owns=shard(1))
    merged = [
        Outcome(a.alerts | b.alerts, tuple(sorted(a.late_groups + b.late_groups)), a.invalid_reason)
        for a, b in zip(first, second, strict=True)
    ]
    expected = [
        Outcome(o.alerts, tuple(sorted(o.late_groups)), o.invalid_reason)
        for o in run_oracle(scenario.records, scenario.lateness_ms)
    ]
    assert [b.invalid_reason for b in second] == [o.invalid_reason for o in expected]
    assert_same(merged, expected, scenario)
