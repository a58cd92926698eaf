"""The functional core of the detector: rule set + per-group window state -> alerts. No I/O.

The shell feeds records in processing order to `Engine.on_rule` and `Engine.on_record` (or, with a parsed
transaction, `on_transaction`), and keeps the state: the detector's own (`to_bytes`, the rule set and the sweep
clock) and one `GroupWindow` per group through a `GroupStore`.

Semantics (CONTRACT section 6 with the project's decisions):
1. A rule version applies to the transactions processed after its message.
2. The rules applicable to a transaction e are the ACTIVE rules whose filters e passes and whose
   grouping fields e all has. PAUSE rules raise nothing.
3. A transaction whose record cannot be parsed, is not a JSON object or lacks an integral `eventTime` is
   rejected (`Rejection`: unparseable / invalid). So is one whose `eventTime` is more than `future_skew_ms` ahead
   of its Kafka timestamp (`future`): it is not evaluated, stores nothing and moves no clock.
4. A group is (key group, grouping values); `group_key` names it. e belongs to the groups of every
   key group some rule has (or had), unless it lacks a grouping field. A group whose key group has
   no rule any more is deleted when next touched; none is created for it.
5. Lateness: M is the largest event time the group has stored and H(g) the key group's horizon, its widest
   ACTIVE window plus `lateness_ms` (just `lateness_ms` without ACTIVE rules). e is LATE for the group if
   `e.event_time_ms < M - H(g)`: it is neither stored nor evaluated there, and the group is listed in
   `late` (other key groups still evaluate e). Otherwise e is stored, and then the events are kept back to
   M - (widest exact ACTIVE window + lateness) and each bucketed rule's buckets back to the bucket holding
   M - (its window + lateness): what lies below is evicted, so state shrinks when the widest rule is paused or
   deleted, and a floor that moves down (the horizon widened) brings nothing back.
6. What is stored of e: event time, ingestion timestamp, partition, offset, the detector's rule
   sequence number, and the values of the fields the key group's rules (ACTIVE or PAUSE) aggregate
   or filter on, never the whole transaction. All rules of a key group share that one copy.
7. An applicable rule whose aggregate field e lacks, or holds something that is not an amount in, skips e
   (`skipped`, with the `SkipReason`): no alert from that rule, and e does not count in its window. Every other
   rule evaluates e as usual; one mistaken rule never silences another. `applied` lists the rules that
   evaluated or skipped e.
8. The window of an exact rule r at e is e itself plus every event x stored in the group with
   `e.event_time_ms - r.window_ms <= x.event_time_ms <= e.event_time_ms` that passes r's filters,
   has a numeric value in r's aggregate field, and was processed after r's window identity was
   first published (`x.rule_seq >= window_start_seq`) and ingested at or after that message's
   timestamp (`x.ingest_ts_ms >= window_start_ts_ms`). The first of those two conditions is this
   project's addition to CONTRACT section 6: it makes a rule blind to transactions processed before
   its message even if their Kafka timestamp is later, because those were stored without the fields
   the new rule reads. x may have a later event time than e (disorder) and is then outside the window.
   A rule with `windowPrecisionSeconds` p keeps buckets of width p instead (aggregates.BucketedWindow): its window
   at e is every bucket from the one holding `e.event_time_ms - r.window_ms` to e's own, with the same members
   (filters, numeric value, window start), so up to one bucket of older history, and anything already in e's own
   bucket, counts. Its buckets keep filling while it is paused, and start afresh when its precision changes.
9. The aggregate is compared exactly with the limit (aggregates.limit_holds); if it holds, r raises
   one alert for e. AVG/MIN/MAX of a window with nothing counted raise nothing.
10. Rule updates: the same uid with the same window identity (grouping keys, aggregate field,
   filters) keeps the window start, whatever else changed (state, aggregator, operator, limit,
   windowMinutes); a new uid (delete and re-create) or a new window identity starts the window at
   this message. A tombstone removes the rule.
11. Order: e is `out_of_order` when a group it was stored in already holds a transaction ingested later (a larger
   Kafka timestamp), i.e. the shell delivered it after one that the contract's ingestion order puts after it.
12. The sweep clock (`SweepClock`) is the median event time of the last transactions evaluated, so that one
   outlier cannot make idle groups look expired; a group idle past its horizon on that clock holds nothing a
   transaction near the clock could see (`group_expired`).

The shell must persist `Engine.to_bytes()` next to the group state rather than rebuild the rule
set from the compacted rules topic: window starts and rule sequence numbers are history the
topic no longer holds.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, Protocol

from .aggregates import (
    MISSING,
    AggregatorKind,
    StoredEvent,
    ValueOf,
    WindowSpec,
    aggregate_value,
    include,
    limit_holds,
)
from .alerts import Alert, alert_id
from .dead_letters import DeadLetterError, Rejection, bounded, preview
from .decimals import AMOUNT_DIGITS, EXACT, ONE, as_amount
from .exceptions import CorruptStateError, InvalidTransactionError, RejectedRuleMessageError
from .json_values import dumps_exact, escape_lone_surrogates
from .model import Rule, RuleMessageReason, RuleState
from .transactions import SkipReason, Transaction, amount_of, parse_transaction
from .windows import GroupWindow

__all__ = [
    "DEFAULT_FUTURE_SKEW_MS",
    "DEFAULT_LATENESS_MS",
    "Engine",
    "GroupStore",
    "GroupWindow",
    "InMemoryGroupStore",
    "KeyGroup",
    "LateGroup",
    "Outcome",
    "RuleVersion",
    "SkippedRule",
    "SweepClock",
    "group_key",
]

KeyGroup = tuple[str, ...]
"""The sorted grouping field names rules share; with the grouping values it names a group."""

DEFAULT_LATENESS_MS: Final = 60_000
DEFAULT_FUTURE_SKEW_MS: Final = 300_000
_STATE_FORMAT: Final = 2
_GROUP_PREVIEW_CHARS: Final = 256
_KEY_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _canonical_key_value(value: object) -> object:
    if isinstance(value, Decimal):
        normalized = value.normalize(EXACT) if value.is_finite() else value
        if (
            normalized.is_finite()
            and normalized == normalized.to_integral_value()
            and normalized.adjusted() < AMOUNT_DIGITS
        ):
            return int(normalized)
        return normalized
    if isinstance(value, list):
        return [_canonical_key_value(item) for item in value]
    if isinstance(value, dict):
        return {key: _canonical_key_value(item) for key, item in value.items()}
    return value


def group_key(key_group: KeyGroup, fields: Mapping[str, object]) -> str | None:
    """The canonical name of the group a transaction belongs to in `key_group`; None if it lacks a grouping field.

    It is the JSON `[[field names], [values]]`. Numbers are compared by value (`7`, `7.0` and `7E0`
    are one group) but a number and a string are different values (`7` is not `"7"`).
    """
    values = []
    plain = True
    for name in key_group:
        if name not in fields:
            return None
        value = fields[name]
        if not isinstance(value, str | int):  # bool is an int: json renders it as true/false
            value = _canonical_key_value(value)
            plain = plain and (value is None or isinstance(value, int))
        values.append(value)
    if plain:  # the common case, through the C encoder; same text as dumps_exact
        return escape_lone_surrogates(_KEY_ENCODER.encode([key_group, values]))
    return dumps_exact([list(key_group), values], sort_keys=True)


class GroupStore(Protocol):
    """Where the shell keeps one GroupWindow per group key."""

    def get(self, group_key: str) -> GroupWindow | None: ...

    def put(self, group_key: str, window: GroupWindow) -> None: ...

    def delete(self, group_key: str) -> None:
        """Forget a group; a no-op if it is unknown."""
        ...


class InMemoryGroupStore:
    """A dict-backed GroupStore for tests and benchmarks."""

    def __init__(self) -> None:
        self.windows: dict[str, GroupWindow] = {}

    def get(self, group_key: str) -> GroupWindow | None:
        return self.windows.get(group_key)

    def put(self, group_key: str, window: GroupWindow) -> None:
        self.windows[group_key] = window

    def delete(self, group_key: str) -> None:
        self.windows.pop(group_key, None)


@dataclass(frozen=True)
class RuleVersion:
    """A rule as the detector holds it: the Rule plus when its message and its current window started.

    `published_ts_ms` is the Kafka timestamp of this version's message; `window_start_ts_ms` and
    `window_start_seq` are the timestamp and detector rule sequence number of the message that first
    published this uid with this window identity.
    """

    rule: Rule
    published_ts_ms: int
    window_start_ts_ms: int
    window_start_seq: int

    @property
    def key_group(self) -> KeyGroup:
        return self.rule.spec.grouping_key_names

    def applies_to(self, fields: Mapping[str, object]) -> bool:
        """ACTIVE, every grouping field present, every filter passed."""
        spec = self.rule.spec
        return (
            spec.state is RuleState.ACTIVE
            and all(name in fields for name in spec.grouping_key_names)
            and all(flt.matches(fields) for flt in spec.filters)
        )


@dataclass(frozen=True)
class LateGroup:
    """A group a transaction was late for: its event time was below the group's newest minus its horizon."""

    group_key: str
    event_time_ms: int
    newest_ms: int
    horizon_ms: int

    @property
    def behind_ms(self) -> int:
        """How far the event time lies below the group's horizon start `newest_ms - horizon_ms`."""
        return self.newest_ms - self.horizon_ms - self.event_time_ms

    def detail(self) -> str:
        """The DLQ `error.detail` of a late transaction: which group, by how much (bounded)."""
        key = self.group_key
        if len(key) > _GROUP_PREVIEW_CHARS:
            key = key[:_GROUP_PREVIEW_CHARS] + "\u2026"
        return bounded(
            f"late for group {key} by {self.behind_ms} ms: eventTime {self.event_time_ms} is before "
            f"{self.newest_ms - self.horizon_ms} (newest eventTime {self.newest_ms} minus horizon {self.horizon_ms} ms)"
        )


@dataclass(frozen=True)
class SkippedRule:
    """An applicable rule that could not aggregate the transaction, and why."""

    rule_id: str
    reason: SkipReason


@dataclass(frozen=True)
class Outcome:
    """What one transaction did (module docstring, points 3, 5, 7 and 11).

    `rejection` is set for a transaction that was not evaluated at all; then everything else is empty. Otherwise
    `alerts` are sorted by rule id, and `late`, `skipped`, `applied` and `out_of_order` concern only the groups the
    caller owns.
    """

    alerts: tuple[Alert, ...] = ()
    late: tuple[LateGroup, ...] = ()
    skipped: tuple[SkippedRule, ...] = ()
    applied: tuple[str, ...] = ()
    out_of_order: bool = False
    rejection: Rejection | None = None


class SweepClock:
    """The event-time clock of idle-group sweeps: the median of the last `SAMPLES` evaluated event times.

    A median cannot be moved by one outlier (a far-future or far-past event time that got past the other checks):
    it always lies between event times of ordinary transactions. Before any transaction it is None.
    """

    SAMPLES: Final = 15

    def __init__(self, samples_ms: Iterable[int] = ()) -> None:
        self._samples: deque[int] = deque(samples_ms, maxlen=self.SAMPLES)

    def observe(self, event_time_ms: int) -> None:
        self._samples.append(event_time_ms)

    @property
    def samples_ms(self) -> tuple[int, ...]:
        return tuple(self._samples)

    @property
    def now_ms(self) -> int | None:
        if not self._samples:
            return None
        ordered = sorted(self._samples)
        return ordered[(len(ordered) - 1) // 2]


def _owns_every_group(_group_key: str) -> bool:
    return True


def _value_of(version: RuleVersion, field_names: tuple[str, ...]) -> ValueOf:
    """The value a stored event contributes to `version`'s window, or None if it does not count."""
    spec = version.rule.spec
    position = {name: index for index, name in enumerate(field_names)}
    checks = tuple((position[flt.field], flt) for flt in spec.filters)
    value_position = None if spec.aggregate_field_name is None else position[spec.aggregate_field_name]
    start_seq, start_ts_ms = version.window_start_seq, version.window_start_ts_ms

    def value_of(event: StoredEvent) -> Decimal | None:
        if event.rule_seq < start_seq or event.ingest_ts_ms < start_ts_ms:
            return None
        values = event.values
        for index, flt in checks:
            value = values[index]
            if value is MISSING or not flt.matches_value(value):
                return None
        if value_position is None:
            return ONE
        return as_amount(values[value_position])

    return value_of


@dataclass(frozen=True)
class _KeyGroupPlan:
    """Everything a transaction needs about one key group's rules, computed once per rule change.

    `specs` holds a WindowSpec per ACTIVE rule and per PAUSE rule with a window precision (whose buckets keep
    filling while it is paused, as a paused exact rule's events keep being stored); `widest_active_window_ms`
    sets the horizon, `widest_exact_window_ms` how far back events are kept (bucketed rules need none), and
    `keeps_events` whether they are kept at all: not when every rule of the key group, in any state, is bucketed,
    since no window then reads a stored event (a new rule or a new precision starts a new window)."""

    field_names: tuple[str, ...]
    active: tuple[RuleVersion, ...]
    widest_active_window_ms: int
    widest_exact_window_ms: int
    keeps_events: bool
    specs: Mapping[str, WindowSpec]


class Engine:
    """The rule set and the evaluation of transactions against it (module docstring: semantics)."""

    def __init__(self, lateness_ms: int = DEFAULT_LATENESS_MS, future_skew_ms: int = DEFAULT_FUTURE_SKEW_MS) -> None:
        if lateness_ms < 0:
            raise ValueError(f"lateness_ms must be >= 0, got {lateness_ms}")
        if future_skew_ms < 0:
            raise ValueError(f"future_skew_ms must be >= 0, got {future_skew_ms}")
        self._lateness_ms = lateness_ms
        self._future_skew_ms = future_skew_ms
        self._versions: dict[str, RuleVersion] = {}
        self._rule_seq = 0
        self._clock = SweepClock()
        self._known_key_groups: set[KeyGroup] = set()
        self._replan()

    @property
    def lateness_ms(self) -> int:
        return self._lateness_ms

    @property
    def future_skew_ms(self) -> int:
        return self._future_skew_ms

    @property
    def rules(self) -> Mapping[str, RuleVersion]:
        return dict(self._versions)

    @property
    def active_rule_count(self) -> int:
        return len(self._active)

    @property
    def key_groups(self) -> tuple[KeyGroup, ...]:
        """Key groups that have rules now."""
        return tuple(sorted(self._plans))

    @property
    def clock_ms(self) -> int | None:
        """The sweep clock (`SweepClock`): the median event time of the last transactions evaluated."""
        return self._clock.now_ms

    def group_expired(self, key_group: KeyGroup, max_event_time_ms: int | None) -> bool:
        """Whether a group of `key_group` (the key group's field names, not a group key) idle since
        `max_event_time_ms` is past its horizon on the sweep clock.

        Such a group holds nothing a transaction near the clock could see: its newest event is older than the
        clock minus the key group's horizon (widest ACTIVE window + lateness). A group whose key group has no rule,
        or that has no event (`max_event_time_ms` None), is always expired; before the clock has a time (no
        transaction evaluated yet), no other group is.
        """
        if key_group not in self._plans:
            return True
        now_ms = self._clock.now_ms
        if max_event_time_ms is None or now_ms is None:
            return max_event_time_ms is None
        return max_event_time_ms < now_ms - self.horizon_ms(key_group)

    def horizon_ms(self, key_group: KeyGroup) -> int:
        """H(g): the event-time span a group of `key_group` keeps, its widest ACTIVE window + lateness."""
        plan = self._plans.get(key_group)
        return self._lateness_ms + (0 if plan is None else plan.widest_active_window_ms)

    def on_rule(self, rule_id: str, rule: Rule | None, published_ts_ms: int) -> None:
        """Apply one rules-topic record (None = tombstone) whose Kafka timestamp is `published_ts_ms`.

        Raises RejectedRuleMessageError (`key-mismatch`), leaving the rule set as it was, when the record key is
        not the rule's id.
        """
        if rule is not None and rule.rule_id != rule_id:
            raise RejectedRuleMessageError(
                RuleMessageReason.KEY_MISMATCH,
                f"rule message key {preview(rule_id)} does not match its ruleId {preview(rule.rule_id)}",
            )
        self._rule_seq += 1
        if rule is None:
            self._versions.pop(rule_id, None)
        else:
            previous = self._versions.get(rule_id)
            keeps_window = (
                previous is not None
                and previous.rule.uid == rule.uid
                and previous.rule.spec.window_identity() == rule.spec.window_identity()
            )
            if previous is not None and keeps_window:
                start_ts_ms, start_seq = previous.window_start_ts_ms, previous.window_start_seq
            else:
                start_ts_ms, start_seq = published_ts_ms, self._rule_seq
            self._versions[rule_id] = RuleVersion(rule, published_ts_ms, start_ts_ms, start_seq)
            self._known_key_groups.add(rule.spec.grouping_key_names)
        self._replan()

    def _replan(self) -> None:
        by_key_group: dict[KeyGroup, list[RuleVersion]] = {}
        for rule_id in sorted(self._versions):
            version = self._versions[rule_id]
            by_key_group.setdefault(version.key_group, []).append(version)
        self._plans: dict[KeyGroup, _KeyGroupPlan] = {}
        for key_group, versions in by_key_group.items():
            field_names = tuple(sorted(set().union(*(v.rule.spec.field_names_used for v in versions))))
            active = tuple(v for v in versions if v.rule.spec.state is RuleState.ACTIVE)
            kept = [v for v in versions if v.rule.spec.state is RuleState.ACTIVE or v.rule.spec.precision_ms]
            specs = {v.rule.rule_id: self._window_spec(v, field_names) for v in kept}
            widest_ms = max((v.rule.spec.window_ms for v in active), default=0)
            widest_exact_ms = max((v.rule.spec.window_ms for v in active if not v.rule.spec.precision_ms), default=0)
            keeps_events = any(not v.rule.spec.precision_ms for v in versions)
            self._plans[key_group] = _KeyGroupPlan(field_names, active, widest_ms, widest_exact_ms, keeps_events, specs)
        self._active = tuple(
            v
            for rule_id in sorted(self._versions)
            if (v := self._versions[rule_id]).rule.spec.state is RuleState.ACTIVE
        )
        self._touched_key_groups = tuple(sorted(self._known_key_groups))

    def on_record(
        self,
        value: bytes | None,
        ingest_ts_ms: int,
        partition: int,
        offset: int,
        store: GroupStore,
        detected_at_ms: int,
        owns: Callable[[str], bool] = _owns_every_group,
    ) -> Outcome:
        """Parse one transactions-topic record and evaluate it (`on_transaction`); a record that does not parse is
        rejected. Never raises for any record value."""
        try:
            tx = parse_transaction(value, ingest_ts_ms, partition, offset)
        except InvalidTransactionError as exc:
            return Outcome(rejection=Rejection(DeadLetterError(exc.error), exc.detail))
        return self.on_transaction(tx, store, detected_at_ms, owns)

    def _window_spec(self, version: RuleVersion, field_names: tuple[str, ...]) -> WindowSpec:
        spec = version.rule.spec
        start = (version.rule.uid, version.window_start_seq, version.window_start_ts_ms)
        return WindowSpec(
            # A bucketed rule's buckets do not depend on the projection: they outlive a change of it.
            key=(*start, field_names) if spec.precision_ms is None else (*start, "buckets", spec.precision_ms),
            kind=AggregatorKind.of(spec.aggregator),
            window_ms=spec.window_ms,
            lateness_ms=self._lateness_ms,
            value_of=_value_of(version, field_names),
            precision_ms=spec.precision_ms,
        )

    def on_transaction(
        self,
        tx: Transaction,
        store: GroupStore,
        detected_at_ms: int,
        owns: Callable[[str], bool] = _owns_every_group,
    ) -> Outcome:
        """Evaluate one transaction against the rules, updating the groups `owns` accepts."""
        ahead_ms = tx.event_time_ms - tx.ingest_ts_ms
        if ahead_ms > self._future_skew_ms:
            detail = (
                f"eventTime {tx.event_time_ms} is {ahead_ms} ms ahead of its Kafka timestamp {tx.ingest_ts_ms} "
                f"(allowed future skew {self._future_skew_ms} ms)"
            )
            return Outcome(rejection=Rejection.of(DeadLetterError.FUTURE, detail))
        self._clock.observe(tx.event_time_ms)
        fields = tx.fields
        alerts: list[Alert] = []
        late: list[LateGroup] = []
        skipped: list[SkippedRule] = []
        applied: list[str] = []
        out_of_order = False
        for key_group in self._touched_key_groups:
            key = group_key(key_group, fields)
            if key is None or not owns(key):
                continue
            plan = self._plans.get(key_group)
            if plan is None:
                store.delete(key)
                continue
            horizon_ms = plan.widest_active_window_ms + self._lateness_ms
            window = store.get(key)
            if window is None:
                window = GroupWindow(plan.field_names)
            else:
                newest_ms = window.max_event_time_ms
                if newest_ms is not None and tx.event_time_ms < newest_ms - horizon_ms:
                    late.append(LateGroup(key, tx.event_time_ms, newest_ms, horizon_ms))
                    continue
                latest_ingest_ms = window.max_ingest_ts_ms
                out_of_order = out_of_order or (latest_ingest_ms is not None and tx.ingest_ts_ms < latest_ingest_ms)
            window.prepare(plan.field_names, plan.specs)
            values = tuple(fields.get(name, MISSING) for name in plan.field_names)
            window.insert(
                StoredEvent(tx.event_time_ms, tx.ingest_ts_ms, tx.partition, tx.offset, self._rule_seq, values)
            )
            for version in plan.active:
                if not version.applies_to(fields):
                    continue
                rule_id = version.rule.rule_id
                applied.append(rule_id)
                name = version.rule.spec.aggregate_field_name
                own = ONE if name is None else amount_of(fields, name)
                if isinstance(own, SkipReason):
                    skipped.append(SkippedRule(rule_id, own))
                    continue
                alert = self._evaluate(version, window, tx, key_group, detected_at_ms, own)
                if alert is not None:
                    alerts.append(alert)
            max_ms = window.max_event_time_ms
            assert max_ms is not None
            keep_from_ms = max_ms - plan.widest_exact_window_ms - self._lateness_ms if plan.keeps_events else max_ms + 1
            window.set_floor(keep_from_ms)
            store.put(key, window)
        alerts.sort(key=lambda alert: alert.rule_id)
        return Outcome(tuple(alerts), tuple(late), tuple(skipped), tuple(applied), out_of_order)

    def _evaluate(
        self,
        version: RuleVersion,
        window: GroupWindow,
        tx: Transaction,
        key_group: KeyGroup,
        detected_at_ms: int,
        own: Decimal,
    ) -> Alert | None:
        """The alert `version` raises for `tx`, whose own contribution to the window is `own`, if its limit holds."""
        rule, spec = version.rule, version.rule.spec
        aggregate = window.aggregate(rule.rule_id, tx.event_time_ms)
        if tx.ingest_ts_ms < version.window_start_ts_ms:
            # e always counts for its own evaluation, even when ingested before the window start.
            aggregate = include(aggregate, own, spec.aggregator)
        if not limit_holds(spec.aggregator, aggregate, spec.limit_operator, spec.limit):
            return None
        value = aggregate_value(spec.aggregator, aggregate)
        assert value is not None
        transaction_id = tx.transaction_id
        return Alert(
            alert_id=alert_id(rule.rule_id, transaction_id),
            rule_id=rule.rule_id,
            rule_generation=rule.generation,
            grouping_key={name: tx.fields[name] for name in key_group},
            aggregator=spec.aggregator,
            aggregate_field_name=spec.aggregate_field_name,
            aggregate_value=value,
            limit_operator=spec.limit_operator,
            limit=spec.limit,
            window_minutes=spec.window_minutes,
            transaction_id=transaction_id,
            transaction=tx.fields,
            transaction_timestamp_ms=tx.ingest_ts_ms,
            detected_at_ms=detected_at_ms,
        )

    def to_bytes(self) -> bytes:
        """The rule-set state (rules with their window starts, rule sequence, key groups, lateness, future skew and
        the sweep clock's samples); `from_bytes` also reads the previous format."""
        state = {
            "format": _STATE_FORMAT,
            "latenessMs": self._lateness_ms,
            "futureSkewMs": self._future_skew_ms,
            "ruleSeq": self._rule_seq,
            "clockSamplesMs": list(self._clock.samples_ms),
            "keyGroups": sorted(list(key_group) for key_group in self._known_key_groups),
            "rules": [
                {
                    "ruleId": rule_id,
                    "rule": version.rule.to_json(),
                    "publishedTsMs": version.published_ts_ms,
                    "windowStartTsMs": version.window_start_ts_ms,
                    "windowStartSeq": version.window_start_seq,
                }
                for rule_id, version in sorted(self._versions.items())
            ],
        }
        return json.dumps(state, sort_keys=True, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes, *, lateness_ms: int | None = None, future_skew_ms: int | None = None) -> Engine:
        """The detector `to_bytes` described; `lateness_ms` and `future_skew_ms`, when given, replace the stored
        ones (configuration may change across restarts). CorruptStateError if the bytes are not such state."""
        try:
            state = json.loads(data)
            if state["format"] not in (1, _STATE_FORMAT):
                raise CorruptStateError(f"unknown detector state format {state['format']!r}")
            detector = cls(
                lateness_ms=int(state["latenessMs"]) if lateness_ms is None else lateness_ms,
                future_skew_ms=int(state.get("futureSkewMs", DEFAULT_FUTURE_SKEW_MS))
                if future_skew_ms is None
                else future_skew_ms,
            )
            detector._rule_seq = int(state["ruleSeq"])
            # Format 1 kept the largest event time instead of the samples; it serves as one sample.
            samples = state.get("clockSamplesMs", [] if state.get("clockMs") is None else [state["clockMs"]])
            detector._clock = SweepClock(int(sample) for sample in samples)
            detector._known_key_groups = {tuple(str(name) for name in group) for group in state["keyGroups"]}
            for entry in state["rules"]:
                detector._versions[str(entry["ruleId"])] = RuleVersion(
                    rule=Rule.from_json(entry["rule"]),
                    published_ts_ms=int(entry["publishedTsMs"]),
                    window_start_ts_ms=int(entry["windowStartTsMs"]),
                    window_start_seq=int(entry["windowStartSeq"]),
                )
        except CorruptStateError:
            raise
        except Exception as exc:
            raise CorruptStateError(f"unreadable detector state: {exc}") from exc
        detector._replan()
        return detector
