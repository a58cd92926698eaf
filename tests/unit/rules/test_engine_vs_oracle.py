"""Property tests: the incremental Engine, and its JVM port, agree exactly with the brute-force oracle."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraudstream_rules import engine as core
from fraudstream_rules.decimals import canonical_decimal
from fraudstream_rules.engine import Engine, GroupStore, GroupWindow, InMemoryGroupStore
from fraudstream_rules.model import Rule, parse_rule_message, parse_spec
from fraudstream_rules.transactions import Transaction, parse_transaction

from .jvm_engine import CallPlan, JvmEngine, JvmOutcome, java_reporter, raw_transaction_json
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
    # candidates of every kind: numbers by value whatever their spelling, strings, null (the JVM indexes them)
    [{"field": "paymentAmount", "operator": "IN", "value": ["0.10", 2, "abc", None, "-5E-1"]}],
    [{"field": "beneficiaryId", "operator": "NOT_IN", "value": ["1.00", True, "x"]}],
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
        # "bogus" is a mistaken rule: no transaction has that field, so it skips everything it applies to.
        "aggregateFieldName": st.sampled_from(["paymentAmount", "paymentAmount", "paymentAmount", "fee", "bogus"]),
        "limitOperatorType": st.sampled_from(OPERATORS),
        "limit": st.sampled_from(LIMITS),
        "windowMinutes": st.integers(1, 5),
        "filters": st.sampled_from(FILTERS),
        # Buckets of 10 s to 1 min: each divides every window of 1-5 minutes.
        "windowPrecisionSeconds": st.sampled_from([None, None, None, 10, 30, 60]),
    }
)
CHANGES = st.sampled_from(["state", "state", "limit", "operator", "window", "aggregator", "identity"])
IDENTITY_PARTS = st.sampled_from(["groupingKeyNames", "aggregateFieldName", "filters", "windowPrecisionSeconds"])
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
FUTURE_SKEW_MS = st.sampled_from([60_000, 300_000])
KINDS = st.lists(st.sampled_from(["rule", "tx", "tx", "tx", "tx", "tx"]), min_size=10, max_size=60)
# The stream's clock advances by these steps; a transaction's event time is the clock plus a jump (mostly none;
# sometimes behind within the lateness, behind within the widest window, beyond every horizon, or in the future),
# and its ingestion timestamp is the clock plus a small jitter that can reverse the ingestion order of neighbours.
CLOCK_STEPS_MS = st.sampled_from([0, 1, 500, 1_000, 5_000, 30_000, 60_000, 90_000])
EVENT_JUMPS_MS = st.sampled_from(
    [0] * 12 + [-1, -30_000, -60_000, -90_000, -200_000, -400_000, -700_000, 120_000, 400_000, 10**12]
)
INGEST_JITTERS_MS = st.sampled_from([0, 0, 0, 1, 500, -1, -3_000])
RULE_ID_CHOICES = st.sampled_from(RULE_IDS)


@dataclass(frozen=True)
class Scenario:
    lateness_ms: int
    records: tuple[Record, ...]
    future_skew_ms: int = 300_000


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """Rule creates/updates/pauses/deletes/re-creates interleaved with disordered, late and future transactions."""
    lateness_ms = draw(LATENESS_MS)
    specs: dict[str, dict[str, object]] = {}
    uids: dict[str, str] = {}
    generations: dict[str, int] = {}
    records: list[Record] = []
    clock_ms = T0_MS
    kinds = ["rule", *draw(KINDS)]
    for index, kind in enumerate(kinds):
        clock_ms += draw(CLOCK_STEPS_MS)
        ingest_ts_ms = clock_ms + draw(INGEST_JITTERS_MS)
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
            event_time_ms = max(0, clock_ms + draw(EVENT_JUMPS_MS))
            value = template.replace("{i}", str(index)).replace("{t}", str(event_time_ms)).encode()
            records.append(parse_transaction(value, ingest_ts_ms, partition=index % 3, offset=index))
    return Scenario(lateness_ms, tuple(records), draw(FUTURE_SKEW_MS))


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


def outcome_of(outcome: core.Outcome) -> Outcome:
    """The oracle's view of a Engine outcome."""
    alerts = frozenset(
        (alert.rule_id, alert.transaction_id, canonical_decimal(alert.aggregate_value)) for alert in outcome.alerts
    )
    return Outcome(
        alerts,
        tuple(late.group_key for late in outcome.late),
        None if outcome.rejection is None else outcome.rejection.error.value,
        frozenset((skip.rule_id, skip.reason.value) for skip in outcome.skipped),
        outcome.out_of_order,
    )


def run_detector(
    scenario: Scenario,
    store: GroupStore,
    *,
    owns: Callable[[str], bool] = lambda _: True,
    reload_detector: bool = False,
) -> list[Outcome]:
    detector = Engine(lateness_ms=scenario.lateness_ms, future_skew_ms=scenario.future_skew_ms)
    outcomes = []
    for record in scenario.records:
        if isinstance(record, RuleRecord):
            rule = record.rule if record.rule is None else parse_rule_message(record.rule.to_message_value())
            detector.on_rule(record.rule_id, rule, record.published_ts_ms)
        else:
            assert isinstance(record, Transaction)
            outcomes.append(outcome_of(detector.on_transaction(record, store, detected_at_ms=0, owns=owns)))
        if reload_detector:
            detector = Engine.from_bytes(detector.to_bytes())
    return outcomes


def oracle_of(scenario: Scenario) -> list[Outcome]:
    return run_oracle(scenario.records, scenario.lateness_ms, scenario.future_skew_ms)


def assert_same(actual: Sequence[Outcome], expected: Sequence[Outcome], scenario: Scenario) -> None:
    assert len(actual) == len(expected)
    transactions = [record for record in scenario.records if isinstance(record, Transaction)]
    for tx, got, want in zip(transactions, actual, expected, strict=True):
        assert got == want, f"transaction {tx.raw!r} at ingest {tx.ingest_ts_ms}"


PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def shard_owner(number: int) -> Callable[[str], bool]:
    return lambda key: zlib.crc32(key.encode()) % 2 == number


class Runner(Protocol):
    """Runs a scenario through one engine: `serialized` keeps groups as bytes (state rows on the JVM)."""

    def __call__(
        self, scenario: Scenario, *, serialized: bool = False, reload_detector: bool = False, shard: int | None = None
    ) -> list[Outcome]: ...


def python_runner(
    scenario: Scenario, *, serialized: bool = False, reload_detector: bool = False, shard: int | None = None
) -> list[Outcome]:
    store: GroupStore = BytesGroupStore() if serialized else InMemoryGroupStore()
    owns = (lambda _: True) if shard is None else shard_owner(shard)
    return run_detector(scenario, store, owns=owns, reload_detector=reload_detector)


def jvm_outcome(outcome: JvmOutcome) -> Outcome:
    alerts = frozenset(
        (str(alert["ruleId"]), str(alert["transactionId"]), str(alert["aggregateValue"])) for alert in outcome.alerts
    )
    return Outcome(
        alerts,
        tuple(key for key, _ in outcome.late),
        None if outcome.rejection is None else outcome.rejection[0],
        frozenset(outcome.skipped),
        outcome.out_of_order,
    )


def jvm_runner(jvm: JvmEngine) -> Runner:
    def run(
        scenario: Scenario, *, serialized: bool = False, reload_detector: bool = False, shard: int | None = None
    ) -> list[Outcome]:
        # persistEveryRecord rebuilds the engine and every group from their bytes after each record.
        outcomes = jvm.run(
            scenario.records,
            scenario.lateness_ms,
            future_skew_ms=scenario.future_skew_ms,
            bucket=shard,
            buckets=None if shard is None else 2,
            persist_every_record=serialized or reload_detector,
        )
        return [jvm_outcome(outcome) for outcome in outcomes]

    return run


@pytest.fixture(scope="module", params=["python", "jvm"])
def engine(request: pytest.FixtureRequest) -> Runner:
    """The engine under test: the Python Engine, or the JVM port through its harness."""
    if request.param == "python":
        return python_runner
    return jvm_runner(request.getfixturevalue("jvm_engine"))


@PROPERTY
@given(scenarios())
def test_detector_matches_oracle(engine: Runner, scenario: Scenario) -> None:
    assert_same(engine(scenario), oracle_of(scenario), scenario)


@PROPERTY
@given(scenarios())
def test_detector_matches_oracle_with_state_serialized_after_every_record(engine: Runner, scenario: Scenario) -> None:
    actual = engine(scenario, serialized=True, reload_detector=True)
    assert_same(actual, oracle_of(scenario), scenario)


@PROPERTY
@given(scenarios())
def test_two_shards_together_match_oracle(engine: Runner, scenario: Scenario) -> None:
    first = engine(scenario, shard=0)
    second = engine(scenario, serialized=True, shard=1)
    merged = [
        Outcome(
            a.alerts | b.alerts,
            tuple(sorted(a.late_groups + b.late_groups)),
            a.rejection,
            a.skipped | b.skipped,
            a.out_of_order or b.out_of_order,
        )
        for a, b in zip(first, second, strict=True)
    ]
    expected = [
        Outcome(o.alerts, tuple(sorted(o.late_groups)), o.rejection, o.skipped, o.out_of_order)
        for o in oracle_of(scenario)
    ]
    assert [b.rejection for b in second] == [o.rejection for o in expected]
    assert_same(merged, expected, scenario)


@PROPERTY
@given(scenarios(), st.integers(min_value=2, max_value=4))
def test_routed_jvm_buckets_together_match_oracle(jvm_engine: JvmEngine, scenario: Scenario, buckets: int) -> None:
    """Each bucket receives only the transactions the detector's router sends it (its reporter's, and those with a
    group it owns among the rules' key groups so far); together the buckets give the oracle's outcomes, and each
    transaction's rejection comes from its reporter."""
    shards = [
        [
            jvm_outcome(outcome)
            for outcome in jvm_engine.run(
                scenario.records,
                scenario.lateness_ms,
                future_skew_ms=scenario.future_skew_ms,
                bucket=bucket,
                buckets=buckets,
                routed=True,
            )
        ]
        for bucket in range(buckets)
    ]
    transactions = [record for record in scenario.records if isinstance(record, Transaction)]
    expected = [
        Outcome(o.alerts, tuple(sorted(o.late_groups)), o.rejection, o.skipped, o.out_of_order)
        for o in oracle_of(scenario)
    ]
    merged = []
    for i, tx in enumerate(transactions):
        outcomes = [shard[i] for shard in shards]
        reporter = outcomes[java_reporter(tx.partition, tx.offset, buckets)]
        merged.append(
            Outcome(
                frozenset().union(*(o.alerts for o in outcomes)),
                tuple(sorted(key for o in outcomes for key in o.late_groups)),
                reporter.rejection,
                frozenset().union(*(o.skipped for o in outcomes)),
                any(o.out_of_order for o in outcomes),
            )
        )
    assert_same(merged, expected, scenario)


@PROPERTY
@given(scenarios(), st.sampled_from(["everything", "cold", "resumed"]))
def test_jvm_windows_paged_out_after_every_record_match_oracle(
    jvm_engine: JvmEngine, scenario: Scenario, page_out: str
) -> None:
    """Windows kept in memory but paged out after every write (every event, or those the detector drops), or dropped
    and resumed from their snapshots at every read, read back what later records need from the state rows: the same
    outcomes as the oracle's."""
    outcomes = jvm_engine.run(
        scenario.records, scenario.lateness_ms, future_skew_ms=scenario.future_skew_ms, page_out=page_out
    )
    assert_same([jvm_outcome(outcome) for outcome in outcomes], oracle_of(scenario), scenario)


@st.composite
def call_plans(draw: st.DrawFn, records: int) -> CallPlan:
    """Calls of one record to all of them, mostly long, some beginning in another JVM; a cache that keeps everything
    or only the current call's groups."""
    # Few ends, so that most calls are long enough to hold rule changes between a group's updates and its write.
    ends = draw(st.sets(st.integers(min_value=0, max_value=max(0, records - 1)), max_size=max(1, records // 4)))
    starts = sorted({0} | {end + 1 for end in ends if end + 1 < records})
    return CallPlan(
        ends=frozenset(ends),
        moves=frozenset(draw(st.sets(st.sampled_from(starts), max_size=max(1, len(starts) // 3)))),
        cache_bytes=draw(st.sampled_from([0, 1])),
    )


@PROPERTY
@given(scenarios(), st.data())
def test_jvm_bucket_state_written_at_call_ends_matches_oracle(
    jvm_engine: JvmEngine, scenario: Scenario, data: st.DataObject
) -> None:
    """Records evaluated in calls of the detector's own state shell, which writes a call's changes only at its end
    (so rule changes fall between a group's update and its write), keeps windows cached across calls or drops them,
    and sometimes begins a call in a JVM that reads the rule set and every group back from the store: the same
    outcomes as the oracle's, and (the harness checks at every call's end) no state row left that nothing needs."""
    plan = data.draw(call_plans(len(scenario.records)))
    outcomes = jvm_engine.run(
        scenario.records, scenario.lateness_ms, future_skew_ms=scenario.future_skew_ms, calls=plan
    )
    assert_same([jvm_outcome(outcome) for outcome in outcomes], oracle_of(scenario), scenario)


def python_jvm_outcome(outcome: core.Outcome) -> JvmOutcome:
    """A Python Engine outcome in the harness's terms (alert JSON parsed back, exact numbers)."""
    return JvmOutcome(
        alerts=tuple(json.loads(alert.to_message_value(), parse_float=Decimal) for alert in outcome.alerts),
        late=tuple((late.group_key, late.detail()) for late in outcome.late),
        skipped=tuple((skip.rule_id, skip.reason.value) for skip in outcome.skipped),
        applied=outcome.applied,
        out_of_order=outcome.out_of_order,
        rejection=None if outcome.rejection is None else (outcome.rejection.error.value, outcome.rejection.detail),
    )


@PROPERTY
@given(scenarios())
def test_jvm_outcomes_match_python_in_every_field(jvm_engine: JvmEngine, scenario: Scenario) -> None:
    """Alert JSON, late groups with their DLQ details, skips, applied rules, order and rejections: all equal."""
    detector = Engine(lateness_ms=scenario.lateness_ms, future_skew_ms=scenario.future_skew_ms)
    store = InMemoryGroupStore()
    expected: list[JvmOutcome] = []
    for record in scenario.records:
        if isinstance(record, RuleRecord):
            detector.on_rule(record.rule_id, record.rule, record.published_ts_ms)
        else:
            assert isinstance(record, Transaction)
            expected.append(python_jvm_outcome(detector.on_transaction(record, store, detected_at_ms=0)))
    actual = jvm_engine.run(scenario.records, scenario.lateness_ms, future_skew_ms=scenario.future_skew_ms)
    assert actual == expected


# ---- edge cases of the JVM port, each compared with the Python Engine ----------------------------------------

RULE_TS = T0_MS
SUM_RULE = Rule(
    "ns/sum",
    1,
    "u1",
    parse_spec(
        {
            "groupingKeyNames": ["payerId"],
            "aggregatorFunctionType": "SUM",
            "aggregateFieldName": "paymentAmount",
            "limitOperatorType": "GREATER_EQUAL",
            "limit": "0",
            "windowMinutes": 1,
        }
    ),
)


def python_outcomes(rules: Sequence[Rule], transactions: Sequence[bytes | str], lateness_ms: int) -> list[JvmOutcome]:
    """What the Python Engine does with `transactions` (raw values, ingested after `rules`), as JvmOutcomes."""
    detector = Engine(lateness_ms=lateness_ms)
    for rule in rules:
        detector.on_rule(rule.rule_id, rule, RULE_TS)
    store = InMemoryGroupStore()
    return [
        python_jvm_outcome(detector.on_record(_bytes(value), RULE_TS + 1 + index, 0, index, store, 0))
        for index, value in enumerate(transactions)
    ]


def _bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def jvm_outcomes(
    jvm: JvmEngine, rules: Sequence[Rule], transactions: Sequence[bytes | str], lateness_ms: int
) -> list[JvmOutcome]:
    records: list[dict[str, object]] = [
        {"kind": "rule", "ruleId": rule.rule_id, "value": rule.to_message_value().decode(), "ts": RULE_TS}
        for rule in rules
    ]
    records += [
        raw_transaction_json(_bytes(value), RULE_TS + 1 + index, 0, index) for index, value in enumerate(transactions)
    ]
    return jvm.run(records, lateness_ms)


GROUPING_VALUES = (
    "7", "7.0", "7E0", '"7"', "0.50", "-0.0", "null", "true", "false", '{"b":1,"a":[1.0, "x"]}', r'"\u00e9\""',
    r'"\ud834\udd1e\u0001\u007f"', "1E+2", "1e100", "1e99", "0.0000001", "123456789012345678901234567890", "[]",
)  # fmt: skip


@pytest.mark.parametrize("value", GROUPING_VALUES)
def test_jvm_group_keys_match_python(jvm_engine: JvmEngine, value: str) -> None:
    # The second transaction is late for the group, so the group key shows in its late groups.
    transactions = [
        f'{{"transactionId":"a","eventTime":{T0_MS},"payerId":{value},"paymentAmount":"1"}}',
        f'{{"transactionId":"b","eventTime":{T0_MS - 60_001},"payerId":{value},"paymentAmount":"1"}}',
    ]
    expected = python_outcomes([SUM_RULE], transactions, lateness_ms=0)
    assert expected[1].late
    assert jvm_outcomes(jvm_engine, [SUM_RULE], transactions, lateness_ms=0) == expected


INVALID_TRANSACTIONS = (
    "",
    "[1]",
    '{"paymentAmount":1}',
    '{"eventTime":"123","payerId":"p"}',
    '{"eventTime":1.5,"payerId":"p"}',
    '{"eventTime":true,"payerId":"p"}',
    '{"eventTime":-1,"payerId":"p"}',
    '{"eventTime":1e30,"payerId":"p"}',
    '{"eventTime":null,"payerId":"p"}',
    '{"eventTime":1.0E3,"payerId":"p","paymentAmount":"2.50"}',
    '{"eventTime":1000,"payerId":"p"}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":"abc"}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":null}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":false}',
    r'{"eventTime":1000,"payerId":"p","paymentAmount":"it\u0027s"}',
    r'{"eventTime":1000,"payerId":"p","paymentAmount":"\"q\" it\u0027s \\ \n \u0001 \u00e9 \u200b \ud834\udd1e"}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":[1, "x", 0.5, null, true]}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":{"a": "b", "c": {"d": 1.50}}}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":"1e500"}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":1e500}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":0.1e-150}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":" 1"}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":"1."}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":".5e-3", "transactionId": 12345678901234567890}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":"1", "transactionId": ""}',
    r'{"eventTime":1000,"payerId":"p","paymentAmount":"1", "transactionId": "\u00e9\ud834\udd1e\""}',
    '{"eventTime":1000,"payerId":"p","paymentAmount":"1", "paymentAmount": "abc"}',
)


@pytest.mark.parametrize("text", INVALID_TRANSACTIONS)
def test_jvm_invalid_reasons_and_alerts_match_python(jvm_engine: JvmEngine, text: str) -> None:
    expected = python_outcomes([SUM_RULE], [text], lateness_ms=60_000)
    assert jvm_outcomes(jvm_engine, [SUM_RULE], [text], lateness_ms=60_000) == expected


CODEC_VALUES = (
    r'[null, true, false, "", "x", "\u00e9\ud834\udd1e\u0000", "1.50", 0, -1, 12345678901234567890123, 1.50, 1E+3,'
    r' 0.000, -1e-400, 123456789.123456789e-30, [1, [2.0, {"a": null}]], {"b": 1, "a": "z", "": []}]'
)


def test_jvm_event_codec_round_trips_values_exactly(jvm_engine: JvmEngine) -> None:
    response = jvm_engine.call(f'{{"codecRoundTrip": {CODEC_VALUES}}}')
    assert response["roundTrip"] is True
    expected = [*json.loads(CODEC_VALUES, parse_float=Decimal), "<MISSING>"]
    assert response["values"] == expected
    assert [str(value) for value in response["values"]] == [str(value) for value in expected]  # digits kept


def test_jvm_event_codec_round_trips_lone_surrogates(jvm_engine: JvmEngine) -> None:
    assert jvm_engine.call(r'{"codecRoundTrip": ["\ud800", {"\udfff": "a\ud800b"}]}')["roundTrip"] is True


UNPARSEABLE_TRANSACTIONS = (
    '{"eventTime":1',
    '{"eventTime":1} x',
    '{"eventTime":1}{}',
    "NaN",
    '{"eventTime":1,"paymentAmount":NaN}',
    '{"eventTime":1,"paymentAmount":-Infinity}',
    '\ufeff{"eventTime":1}',
    '{"eventTime":01}',
    "{'eventTime':1}",
    '{"eventTime":1,}',
    '{"eventTime":1,"a":"\x01"}',
    " ",
)


@pytest.mark.parametrize("text", UNPARSEABLE_TRANSACTIONS)
def test_jvm_refuses_what_python_cannot_parse(jvm_engine: JvmEngine, text: str) -> None:
    # Both reject it as unparseable; a JSON syntax error's detail is each parser's own message.
    (expected,) = python_outcomes([SUM_RULE], [text], lateness_ms=60_000)
    (actual,) = jvm_outcomes(jvm_engine, [SUM_RULE], [text], lateness_ms=60_000)
    assert expected.rejection is not None and expected.rejection[0] == "unparseable"
    assert actual.rejection is not None and actual.rejection[0] == "unparseable"
    assert (actual.alerts, actual.late) == ((), ())
