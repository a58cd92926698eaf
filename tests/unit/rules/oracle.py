"""Brute-force reference implementation of the detector's semantics (fraudstream_rules.engine docstring).

No incremental structure: every window is recomputed from the group's full stored history, every
aggregate with Fractions, lateness and the floor by scanning. Slow and obviously right; the
property tests hold the Detector to it.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Context, Decimal
from fractions import Fraction
from typing import TypeAlias

from fraudstream_rules.decimals import canonical_decimal
from fraudstream_rules.engine import group_key
from fraudstream_rules.exceptions import InvalidTransactionError
from fraudstream_rules.model import AggregatorFunction, Rule, RuleState
from fraudstream_rules.transactions import Transaction, numeric_value

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
    alerts: frozenset[AlertKey]
    late_groups: tuple[str, ...]
    invalid_reason: str | None


@dataclass(frozen=True)
class _Version:
    rule: Rule
    window_start_ts_ms: int
    window_start_index: int  # record index of the message that started the window


def _amount(tx: Transaction, name: str) -> Decimal | None:
    try:
        return numeric_value(tx.fields, name)
    except InvalidTransactionError:
        return None


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


def run_oracle(records: Sequence[Record], lateness_ms: int) -> list[Outcome]:
    """One Outcome per transaction record, in order."""
    rules: dict[str, _Version] = {}
    key_groups: set[tuple[str, ...]] = set()
    stored: dict[str, list[tuple[int, Transaction]]] = {}
    floors: dict[str, int] = {}
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
                ):
                    rules[record.rule_id] = _Version(new, previous.window_start_ts_ms, previous.window_start_index)
                else:
                    rules[record.rule_id] = _Version(new, record.published_ts_ms, index)
                key_groups.add(new.spec.grouping_key_names)
            continue

        tx = record
        applicable = sorted(rule_id for rule_id, version in rules.items() if _applies(version.rule, tx))
        invalid = None
        for rule_id in applicable:
            name = rules[rule_id].rule.spec.aggregate_field_name
            if name is not None and invalid is None:
                try:
                    numeric_value(tx.fields, name)
                except InvalidTransactionError as exc:
                    invalid = exc.reason
        if invalid is not None:
            outcomes.append(Outcome(frozenset(), (), invalid))
            continue

        alerts: set[AlertKey] = set()
        late: list[str] = []
        for key_group in sorted(key_groups):
            key = group_key(key_group, tx.fields)
            if key is None:
                continue
            group_rules = {i: v for i, v in rules.items() if v.rule.spec.grouping_key_names == key_group}
            if not group_rules:
                stored.pop(key, None)
                floors.pop(key, None)
                continue
            events = stored.setdefault(key, [])
            if events and tx.event_time_ms < max(x.event_time_ms for _, x in events) - lateness_ms:
                late.append(key)
                continue
            events.append((index, tx))

            for rule_id, version in sorted(group_rules.items()):
                if rule_id not in applicable:
                    continue
                spec = version.rule.spec
                amounts = []
                for j, x in events:
                    if x is not tx and (j <= version.window_start_index or x.ingest_ts_ms < version.window_start_ts_ms):
                        continue
                    if not tx.event_time_ms - spec.window_ms <= x.event_time_ms <= tx.event_time_ms:
                        continue
                    if not all(flt.matches(x.fields) for flt in spec.filters):
                        continue
                    amount = Decimal(1) if spec.aggregate_field_name is None else _amount(x, spec.aggregate_field_name)
                    if amount is not None:
                        amounts.append(amount)
                result = _aggregate(spec.aggregator, amounts)
                if result is not None and _HOLDS[spec.limit_operator.value](result[0], Fraction(spec.limit)):
                    alerts.add((rule_id, tx.transaction_id, canonical_decimal(result[1])))

            widest_ms = max(
                (v.rule.spec.window_ms for v in group_rules.values() if v.rule.spec.state is RuleState.ACTIVE),
                default=0,
            )
            candidate = max(x.event_time_ms for _, x in events) - widest_ms - lateness_ms
            floors[key] = max(floors.get(key, candidate), candidate)
            stored[key] = [(j, x) for j, x in events if x.event_time_ms >= floors[key]]
        outcomes.append(Outcome(frozenset(alerts), tuple(late), None))
    return outcomes
