"""The functional core of the detector: rule set + per-group window state -> alerts. No I/O.

The shell feeds records in processing order (Kafka timestamp, then partition, then offset) to
`Detector.on_rule` and `Detector.on_transaction`, and keeps the state: the detector's own
(`to_bytes`, the rule set) and one `GroupWindow` per group through a `GroupStore`.

Semantics (CONTRACT section 6 with the project's decisions):
1. A rule version applies to the transactions processed after its message.
2. The rules applicable to a transaction e are the ACTIVE rules whose filters e passes and whose
   grouping fields e all has. PAUSE rules raise nothing.
3. Validation is atomic and needs no group state: if any applicable rule aggregates a field that e
   lacks or holds a non-number in, e is not evaluated at all (no alert, nothing stored, no lateness
   reported) and the outcome carries `invalid_reason` (that of the first such rule by rule id).
4. A group is (key group, grouping values); `group_key` names it. e belongs to the groups of every
   key group some rule has (or had), unless it lacks a grouping field. A group whose key group has
   no rule any more is deleted when next touched; none is created for it.
5. Lateness: M is the largest event time the group has stored. e is LATE for the group if
   `e.event_time_ms < M - lateness_ms`: it is neither stored nor evaluated there, and the group is
   listed in `late_groups`. Otherwise e is stored; then events below the floor are evicted, where
   floor = M - (widest window_ms of the key group's ACTIVE rules, 0 if none) - lateness_ms, and the
   floor never goes down. So state shrinks when the widest rule is paused or deleted.
6. What is stored of e: event time, ingestion timestamp, partition, offset, the detector's rule
   sequence number, and the values of the fields the key group's rules (ACTIVE or PAUSE) aggregate
   or filter on, never the whole transaction. All rules of a key group share that one copy.
7. The window of rule r at e is e itself plus every event x stored in the group with
   `e.event_time_ms - r.window_ms <= x.event_time_ms <= e.event_time_ms` that passes r's filters,
   has a numeric value in r's aggregate field, and was processed after r's window identity was
   first published (`x.rule_seq >= window_start_seq`) and ingested at or after that message's
   timestamp (`x.ingest_ts_ms >= window_start_ts_ms`). The first of those two conditions is this
   project's addition to CONTRACT section 6: it makes a rule blind to transactions processed before
   its message even if their Kafka timestamp is later, because those were stored without the fields
   the new rule reads and were never validated against it. x may have a later event time than e
   (disorder) and is then outside the window.
8. The aggregate is compared exactly with the limit (aggregates.limit_holds); if it holds, r raises
   one alert for e. AVG/MIN/MAX of a window with nothing counted raise nothing.
9. Rule updates: the same uid with the same window identity (grouping keys, aggregate field,
   filters) keeps the window start, whatever else changed (state, aggregator, operator, limit,
   windowMinutes); a new uid (delete and re-create) or a new window identity starts the window at
   this message. A tombstone removes the rule.

The shell must persist `Detector.to_bytes()` next to the group state rather than rebuild the rule
set from the compacted rules topic: window starts and rule sequence numbers are history the
topic no longer holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
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
from .decimals import AMOUNT_DIGITS, EXACT, ONE, as_amount
from .exceptions import CorruptStateError, InvalidRuleError, InvalidTransactionError
from .json_values import dumps_exact
from .model import Rule, RuleState
from .transactions import Transaction, numeric_value
from .windows import GroupWindow

__all__ = [
    "DEFAULT_LATENESS_MS",
    "Detector",
    "GroupStore",
    "GroupWindow",
    "InMemoryGroupStore",
    "KeyGroup",
    "RuleVersion",
    "TransactionOutcome",
    "group_key",
]

KeyGroup = tuple[str, ...]
"""The sorted grouping field names rules share; with the grouping values it names a group."""

DEFAULT_LATENESS_MS: Final = 60_000
_STATE_FORMAT: Final = 1
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
        return _KEY_ENCODER.encode([key_group, values])
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
        window.take_journal()  # the journal feeds incremental persistence; here the object itself is the state
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
class TransactionOutcome:
    """What one transaction did: alerts raised, groups it was late for, or why it was invalid."""

    alerts: tuple[Alert, ...]
    late_groups: tuple[str, ...]
    invalid_reason: str | None


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
    """Everything a transaction needs about one key group's rules, computed once per rule change."""

    field_names: tuple[str, ...]
    active: tuple[RuleVersion, ...]
    widest_active_window_ms: int
    specs: Mapping[str, WindowSpec]


class Detector:
    """The rule set and the evaluation of transactions against it (module docstring: semantics)."""

    def __init__(self, lateness_ms: int = DEFAULT_LATENESS_MS) -> None:
        if lateness_ms < 0:
            raise ValueError(f"lateness_ms must be >= 0, got {lateness_ms}")
        self._lateness_ms = lateness_ms
        self._versions: dict[str, RuleVersion] = {}
        self._rule_seq = 0
        self._clock_ms: int | None = None
        self._known_key_groups: set[KeyGroup] = set()
        self._replan()

    @property
    def lateness_ms(self) -> int:
        return self._lateness_ms

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
        """The largest event time of the transactions evaluated so far (the detector's event-time clock)."""
        return self._clock_ms

    def group_expired(self, group_key: str, max_event_time_ms: int | None) -> bool:
        """Whether a group idle since `max_event_time_ms` is past its retention on the detector's clock.

        Such a group holds nothing a transaction near the clock could see: its newest event is older than the
        clock minus (widest ACTIVE window + lateness). A group whose key group has no rule is always expired.
        """
        key_group: KeyGroup = tuple(json.loads(group_key)[0])
        if key_group not in self._plans:
            return True
        if max_event_time_ms is None or self._clock_ms is None:
            return max_event_time_ms is None
        return max_event_time_ms < self._clock_ms - self.retention_ms(key_group)

    def retention_ms(self, key_group: KeyGroup) -> int:
        """Event-time span a group of `key_group` keeps: widest ACTIVE window + lateness; 0 without rules."""
        plan = self._plans.get(key_group)
        return 0 if plan is None else plan.widest_active_window_ms + self._lateness_ms

    def on_rule(self, rule_id: str, rule: Rule | None, published_ts_ms: int) -> None:
        """Apply one rules-topic record (None = tombstone) whose Kafka timestamp is `published_ts_ms`."""
        if rule is not None and rule.rule_id != rule_id:
            raise InvalidRuleError(f"rule message key {rule_id!r} does not match its ruleId {rule.rule_id!r}")
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
            specs = {
                v.rule.rule_id: WindowSpec(
                    key=(v.rule.uid, v.window_start_seq, v.window_start_ts_ms, field_names),
                    kind=AggregatorKind.of(v.rule.spec.aggregator),
                    window_ms=v.rule.spec.window_ms,
                    lateness_ms=self._lateness_ms,
                    value_of=_value_of(v, field_names),
                )
                for v in active
            }
            widest_ms = max((v.rule.spec.window_ms for v in active), default=0)
            self._plans[key_group] = _KeyGroupPlan(field_names, active, widest_ms, specs)
        self._active = tuple(
            v
            for rule_id in sorted(self._versions)
            if (v := self._versions[rule_id]).rule.spec.state is RuleState.ACTIVE
        )
        self._touched_key_groups = tuple(sorted(self._known_key_groups))

    def on_transaction(
        self,
        tx: Transaction,
        store: GroupStore,
        detected_at_ms: int,
        owns: Callable[[str], bool] = _owns_every_group,
    ) -> TransactionOutcome:
        """Evaluate one transaction against the rules, updating the groups `owns` accepts."""
        fields = tx.fields
        applicable = [version for version in self._active if version.applies_to(fields)]
        for version in applicable:
            name = version.rule.spec.aggregate_field_name
            if name is not None:
                try:
                    numeric_value(fields, name)
                except InvalidTransactionError as exc:
                    return TransactionOutcome((), (), exc.reason)
        if self._clock_ms is None or tx.event_time_ms > self._clock_ms:
            self._clock_ms = tx.event_time_ms
        applicable_ids = {version.rule.rule_id for version in applicable}
        alerts: list[Alert] = []
        late_groups: list[str] = []
        for key_group in self._touched_key_groups:
            key = group_key(key_group, fields)
            if key is None or not owns(key):
                continue
            plan = self._plans.get(key_group)
            if plan is None:
                store.delete(key)
                continue
            window = store.get(key)
            if window is None:
                window = GroupWindow(plan.field_names)
            elif window.is_late(tx.event_time_ms, self._lateness_ms):
                late_groups.append(key)
                continue
            window.prepare(plan.field_names, plan.specs)
            values = tuple(fields.get(name, MISSING) for name in plan.field_names)
            window.insert(
                StoredEvent(tx.event_time_ms, tx.ingest_ts_ms, tx.partition, tx.offset, self._rule_seq, values)
            )
            for version in plan.active:
                if version.rule.rule_id in applicable_ids:
                    alert = self._evaluate(version, window, tx, key_group, detected_at_ms)
                    if alert is not None:
                        alerts.append(alert)
            max_ms = window.max_event_time_ms
            assert max_ms is not None
            window.raise_floor(max_ms - plan.widest_active_window_ms - self._lateness_ms)
            store.put(key, window)
        alerts.sort(key=lambda alert: alert.rule_id)
        return TransactionOutcome(tuple(alerts), tuple(late_groups), None)

    def _evaluate(
        self, version: RuleVersion, window: GroupWindow, tx: Transaction, key_group: KeyGroup, detected_at_ms: int
    ) -> Alert | None:
        rule, spec = version.rule, version.rule.spec
        aggregate = window.aggregate(rule.rule_id, tx.event_time_ms)
        if tx.ingest_ts_ms < version.window_start_ts_ms:
            # e always counts for its own evaluation, even when ingested before the window start.
            own = ONE if spec.aggregate_field_name is None else numeric_value(tx.fields, spec.aggregate_field_name)
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
        """The rule-set state (rules with their window starts, rule sequence, key groups, lateness)."""
        state = {
            "format": _STATE_FORMAT,
            "latenessMs": self._lateness_ms,
            "ruleSeq": self._rule_seq,
            "clockMs": self._clock_ms,
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
    def from_bytes(cls, data: bytes) -> Detector:
        try:
            state = json.loads(data)
            if state["format"] != _STATE_FORMAT:
                raise CorruptStateError(f"unknown detector state format {state['format']!r}")
            detector = cls(lateness_ms=int(state["latenessMs"]))
            detector._rule_seq = int(state["ruleSeq"])
            detector._clock_ms = None if state.get("clockMs") is None else int(state["clockMs"])
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
