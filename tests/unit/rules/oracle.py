"""Brute-force reference implementation of the detector's semantics (fraudstream_rules.engine docstring, CONTRACT
section 6).

No incremental structure: every window is recomputed from the group's full stored history, every aggregate with
Fractions, the horizon and the floor by scanning; a bucketed rule's window from the member events its buckets would
hold. Slow and obviously right; the property tests hold the Engine and its JVM twin to it.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Context, Decimal
from fractions import Fraction
from typing import TypeAlias

from fraudstream_rules.decimals import canonical_decimal
from fraudstream_rules.engine import DEFAULT_FUTURE_SKEW_MS, group_key
from fraudstream_rules.model import AggregatorFunction, Rule, RuleState
from fraudstream_rules.transactions import SkipReason, Transaction, amount_of

_HOLDS = {
    "EQUAL": operator.eq,
    "NOT_EQUAL": operator.ne,
    "GREATER": operator.gt,
    "GREATER_EQUAL": operator.ge,
    "LESS": operator.lt,
    "LESS_EQUAL": operator.le,
}


@dataclass(frozen=True)
class RuleRecord:
    """A rules-topic record: `rule` None is a tombstone."""

    rule_id: str
    rule: Rule | None
    published_ts_ms: int


Record: TypeAlias = RuleRecord | Transaction
AlertKey = tuple[str, str, str]  # (ruleId, transactionId, aggregateValue as canonical text)


@dataclass(frozen=True)
class Outcome:
    """What one transaction did; `rejection` is the DLQ error of a transaction that was not evaluated at all."""

    alerts: frozenset[AlertKey]
    late_groups: tuple[str, ...] = ()
    rejection: str | None = None
    skipped: frozenset[tuple[str, str]] = frozenset()
    out_of_order: bool = False


@dataclass(frozen=True)
class _Version:
    rule: Rule
    window_start_ts_ms: int
    window_start_index: int  # record index of the message that started the window


def _applies(rule: Rule, tx: Transaction) -> bool:
    spec = rule.spec
    return (
        spec.state is RuleState.ACTIVE
        and all(name in tx.fields for name in spec.grouping_key_names)
        and all(flt.matches(tx.fields) for flt in spec.filters)
    )


def _aggregate(function: AggregatorFunction, amounts: list[Decimal]) -> tuple[Fraction, Decimal] | None:
    """(exact value, reported value) of the aggregate, None when undefined."""
    exact_sum = sum((Fraction(amount) for amount in amounts), Fraction(0))
    reported_sum = Context(prec=500).divide(Decimal(exact_sum.numerator), Decimal(exact_sum.denominator))
    if function is AggregatorFunction.COUNT:
        return Fraction(len(amounts)), Decimal(len(amounts))
    if function is AggregatorFunction.SUM:
        return exact_sum, reported_sum
    if not amounts:
        return None
    if function is AggregatorFunction.AVG:
        return exact_sum / len(amounts), Context(prec=34).divide(reported_sum, Decimal(len(amounts)))
    extreme = min(amounts) if function is AggregatorFunction.MIN else max(amounts)
    return Fraction(extreme), extreme


def _member(version: _Version, j: int, x: Transaction, e: Transaction) -> Decimal | None:
    """The value x contributes to version's window at e (x may be e), None if it is no member."""
    spec = version.rule.spec
    if x is not e and (j <= version.window_start_index or x.ingest_ts_ms < version.window_start_ts_ms):
        return None
    if not all(flt.matches(x.fields) for flt in spec.filters):
        return None
    if spec.aggregate_field_name is None:
        return Decimal(1)
    amount = amount_of(x.fields, spec.aggregate_field_name)
    return amount if isinstance(amount, Decimal) else None


def _bucket_member(version: _Version, j: int, x: Transaction) -> Decimal | None:
    """What x puts into version's buckets when stored (the window start applies to every event, x included)."""
    if j <= version.window_start_index or x.ingest_ts_ms < version.window_start_ts_ms:
        return None
    return _member(version, j, x, x)


@dataclass
class _Buckets:
    """The member events a bucketed rule's buckets hold in one group: (record index, event, value)."""

    window: tuple[str, int]  # (uid, window start index): a new window starts afresh
    members: list[tuple[int, Transaction, Decimal]]


def run_oracle(
    records: Sequence[Record], lateness_ms: int, future_skew_ms: int = DEFAULT_FUTURE_SKEW_MS
) -> list[Outcome]:
    """One Outcome per transaction record, in order."""
    rules: dict[str, _Version] = {}
    key_groups: set[tuple[str, ...]] = set()
    stored: dict[str, list[tuple[int, Transaction]]] = {}
    buckets: dict[str, dict[str, _Buckets]] = {}
    latest_ingest: dict[str, int] = {}
    outcomes: list[Outcome] = []
    for index, record in enumerate(records):
        if isinstance(record, RuleRecord):
            previous = rules.pop(record.rule_id, None)
            if record.rule is not None:
                new = record.rule
                if (
                    previous is not None
                    and previous.rule.uid == new.uid
                    and previous.rule.spec.grouping_key_names == new.spec.grouping_key_names
                    and previous.rule.spec.aggregate_field_name == new.spec.aggregate_field_name
                    and previous.rule.spec.filters == new.spec.filters
                    and previous.rule.spec.window_precision_seconds == new.spec.window_precision_seconds
                ):
                    rules[record.rule_id] = _Version(new, previous.window_start_ts_ms, previous.window_start_index)
                else:
                    rules[record.rule_id] = _Version(new, record.published_ts_ms, index)
                key_groups.add(new.spec.grouping_key_names)
            continue

        tx = record
        if tx.event_time_ms - tx.ingest_ts_ms > future_skew_ms:
            outcomes.append(Outcome(frozenset(), rejection="future"))
            continue
        applicable = {rule_id for rule_id, version in rules.items() if _applies(version.rule, tx)}
        alerts: set[AlertKey] = set()
        late: list[str] = []
        skipped: set[tuple[str, str]] = set()
        out_of_order = False
        for key_group in sorted(key_groups):
            key = group_key(key_group, tx.fields)
            if key is None:
                continue
            group_rules = {i: v for i, v in rules.items() if v.rule.spec.grouping_key_names == key_group}
            if not group_rules:
                stored.pop(key, None)
                buckets.pop(key, None)
                latest_ingest.pop(key, None)
                continue
            active = [v for v in group_rules.values() if v.rule.spec.state is RuleState.ACTIVE]
            horizon_ms = lateness_ms + max((v.rule.spec.window_ms for v in active), default=0)
            exact_ms = lateness_ms + max(
                (v.rule.spec.window_ms for v in active if not v.rule.spec.precision_ms), default=0
            )
            events = stored.setdefault(key, [])
            newest_ms = max((x.event_time_ms for _, x in events), default=None)
            if newest_ms is not None and tx.event_time_ms < newest_ms - horizon_ms:
                late.append(key)
                continue
            if latest_ingest.get(key, tx.ingest_ts_ms) > tx.ingest_ts_ms:
                out_of_order = True
            latest_ingest[key] = max(latest_ingest.get(key, tx.ingest_ts_ms), tx.ingest_ts_ms)
            events.append((index, tx))
            # Bucketed rules (ACTIVE or PAUSE) keep their buckets while their window lasts; they take e in.
            held = buckets.setdefault(key, {})
            for rule_id in [rule_id for rule_id in held if rule_id not in group_rules]:
                del held[rule_id]
            for rule_id, version in group_rules.items():
                if version.rule.spec.precision_ms is None:
                    held.pop(rule_id, None)
                    continue
                window = (version.rule.uid, version.window_start_index)
                if rule_id not in held or held[rule_id].window != window:
                    held[rule_id] = _Buckets(window, [])
                value = _bucket_member(version, index, tx)
                if value is not None:
                    held[rule_id].members.append((index, tx, value))

            for rule_id, version in sorted(group_rules.items()):
                if rule_id not in applicable:
                    continue
                spec = version.rule.spec
                if spec.aggregate_field_name is not None:
                    own = amount_of(tx.fields, spec.aggregate_field_name)
                    if isinstance(own, SkipReason):
                        skipped.add((rule_id, own.value))
                        continue
                amounts = []
                if spec.precision_ms is None:
                    for j, x in events:
                        in_window = tx.event_time_ms - spec.window_ms <= x.event_time_ms <= tx.event_time_ms
                        if in_window and (amount := _member(version, j, x, tx)) is not None:
                            amounts.append(amount)
                else:
                    p = spec.precision_ms
                    first, last = (tx.event_time_ms - spec.window_ms) // p, tx.event_time_ms // p
                    members = held[rule_id].members
                    amounts = [value for _, x, value in members if first <= x.event_time_ms // p <= last]
                    if all(x is not tx for _, x, _ in members):  # e always counts for its own evaluation
                        own_value = _member(version, index, tx, tx)
                        assert own_value is not None
                        amounts.append(own_value)
                result = _aggregate(spec.aggregator, amounts)
                if result is not None and _HOLDS[spec.limit_operator.value](result[0], Fraction(spec.limit)):
                    alerts.add((rule_id, tx.transaction_id, canonical_decimal(result[1])))

            stored_newest_ms = max(x.event_time_ms for _, x in events)
            stored[key] = [(j, x) for j, x in events if x.event_time_ms >= stored_newest_ms - exact_ms]
            for rule_id, entry in held.items():
                precision_ms = group_rules[rule_id].rule.spec.precision_ms
                assert precision_ms is not None
                first = (stored_newest_ms - lateness_ms - group_rules[rule_id].rule.spec.window_ms) // precision_ms
                entry.members = [m for m in entry.members if m[1].event_time_ms // precision_ms >= first]
        outcomes.append(Outcome(frozenset(alerts), tuple(late), None, frozenset(skipped), out_of_order))
    return outcomes
