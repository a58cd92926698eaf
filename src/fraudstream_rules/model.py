"""The FraudRule model: spec validation and normalization, filters, and the Rule JSON on the rules topic.

Contracts (CONTRACT section 4, plus the project's choices):
- `parse_spec` accepts a raw spec (as the API server or the rules topic hands it over) and either
  returns a normalized `RuleSpec` or raises `InvalidRuleError` whose message names the field
  (`spec.limit ...`) and is fit to show users in the FraudRule's Ready condition.
- Normalization: `groupingKeyNames` sorted; `aggregateFieldName` dropped for COUNT (it is ignored, not
  refused); filter values that are integers or decimal strings become Decimals (`"1.50"` and `1.5`
  are the same filter); `limit` is an exact Decimal. `to_json` renders the normalized spec, and
  `parse_spec(spec.to_json()) == spec` always holds.
- Numbers in a spec are integers or decimal strings; JSON floats (as YAML or the Kubernetes client
  produce them) are refused with a hint to quote them, because a float cannot carry an exact decimal.
- Filter semantics: a missing field never matches (not even NOT_EQUAL / NOT_IN). Two values are
  equal when both read as numbers (`as_number`: numeric strings on either side count) and are
  numerically equal, or both are strings and equal, or both are the same boolean, or both are null.
  Ordering operators hold only between two numbers.
- `RuleSpec.window_identity()` is what, when it changes, starts the rule's window afresh: grouping
  keys, aggregate field, filters and window precision. Changing state, aggregator, operator, limit or
  windowMinutes keeps the window.
- `windowPrecisionSeconds` (optional, CONTRACT section 4) must divide `windowMinutes * 60`; a rule with it keeps
  pre-aggregated buckets of that width instead of events (aggregates.BucketedWindow).
- Rule JSON carries `formatVersion` (`RULE_FORMAT_VERSION`); a message without it is version 1. A reader refuses a
  version it does not know (`parse_rule_message` raises RejectedRuleMessageError with reason
  `unsupported-version`), so a rule written by a newer operator is never half-understood.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Final, TypeVar

from .dead_letters import preview
from .decimals import as_number, canonical_decimal, is_amount, parse_decimal_text
from .exceptions import InvalidRuleError, RejectedRuleMessageError
from .json_values import MAX_EXPONENT, MAX_NUMBER_CHARS, JsonValueError, loads_exact

_E = TypeVar("_E", bound=StrEnum)

MAX_WINDOW_MINUTES: Final = 527_040  # 366 days
MS_PER_MINUTE: Final = 60_000
RULE_FORMAT_VERSION: Final = 2
"""The newest Rule JSON format this package reads and writes. A rule is written with the lowest version that can
carry it: 1, unless it uses `windowPrecisionSeconds` (2), so readers of version 1 keep reading every other rule."""


class RuleMessageReason(StrEnum):
    """Why the detector could not apply a rules-topic record (the `fraud_rule_messages_rejected_total` label)."""

    UNPARSEABLE = "unparseable"
    INVALID = "invalid"
    KEY_MISMATCH = "key-mismatch"
    UNSUPPORTED_VERSION = "unsupported-version"


class RuleState(StrEnum):
    ACTIVE = "ACTIVE"
    PAUSE = "PAUSE"


class AggregatorFunction(StrEnum):
    SUM = "SUM"
    COUNT = "COUNT"
    AVG = "AVG"
    MIN = "MIN"
    MAX = "MAX"


_ORDERING: Final[Mapping[str, Callable[[Decimal, Decimal], bool]]] = {
    "EQUAL": operator.eq,
    "NOT_EQUAL": operator.ne,
    "GREATER": operator.gt,
    "GREATER_EQUAL": operator.ge,
    "LESS": operator.lt,
    "LESS_EQUAL": operator.le,
}


class LimitOperator(StrEnum):
    EQUAL = "EQUAL"
    NOT_EQUAL = "NOT_EQUAL"
    GREATER = "GREATER"
    GREATER_EQUAL = "GREATER_EQUAL"
    LESS = "LESS"
    LESS_EQUAL = "LESS_EQUAL"

    def holds(self, left: Decimal, right: Decimal) -> bool:
        """Whether `left <op> right`, compared exactly."""
        return _ORDERING[self.value](left, right)


class FilterOperator(StrEnum):
    EQUAL = "EQUAL"
    NOT_EQUAL = "NOT_EQUAL"
    GREATER = "GREATER"
    GREATER_EQUAL = "GREATER_EQUAL"
    LESS = "LESS"
    LESS_EQUAL = "LESS_EQUAL"
    IN = "IN"
    NOT_IN = "NOT_IN"

    @property
    def takes_list(self) -> bool:
        return self in (FilterOperator.IN, FilterOperator.NOT_IN)

    @property
    def is_ordering(self) -> bool:
        return self.value in ("GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL")


FilterScalar = str | Decimal | bool | None
FilterValue = FilterScalar | tuple[FilterScalar, ...]


def _scalars_equal(actual: object, expected: FilterScalar) -> bool:
    actual_number, expected_number = as_number(actual), as_number(expected)
    if actual_number is not None and expected_number is not None:
        return actual_number == expected_number
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and actual == expected
    if expected is None or actual is None:
        return expected is None and actual is None
    return isinstance(actual, str) and isinstance(expected, str) and actual == expected


def _scalar_json(value: FilterScalar) -> object:
    return canonical_decimal(value) if isinstance(value, Decimal) else value


@dataclass(frozen=True)
class Filter:
    """`field operator value`; for IN/NOT_IN `value` is a tuple of scalars."""

    field: str
    operator: FilterOperator
    value: FilterValue

    def matches(self, fields: Mapping[str, object]) -> bool:
        """Whether a transaction's fields satisfy the filter; a missing field never does."""
        if self.field not in fields:
            return False
        return self.matches_value(fields[self.field])

    def matches_value(self, actual: object) -> bool:
        """Whether a present field value satisfies the filter (see the module docstring)."""
        op = self.operator
        value = self.value
        if isinstance(value, tuple):
            found = any(_scalars_equal(actual, candidate) for candidate in value)
            return found if op is FilterOperator.IN else not found
        if op is FilterOperator.EQUAL:
            return _scalars_equal(actual, value)
        if op is FilterOperator.NOT_EQUAL:
            return not _scalars_equal(actual, value)
        actual_number, expected_number = as_number(actual), as_number(value)
        if actual_number is None or expected_number is None:
            return False
        return _ORDERING[op.value](actual_number, expected_number)

    def to_json(self) -> dict[str, object]:
        value: object
        if isinstance(self.value, tuple):
            value = [_scalar_json(item) for item in self.value]
        else:
            value = _scalar_json(self.value)
        return {"field": self.field, "operator": self.operator.value, "value": value}


@dataclass(frozen=True)
class RuleSpec:
    """A validated, normalized FraudRule spec (construct it through `parse_spec`)."""

    state: RuleState
    grouping_key_names: tuple[str, ...]
    aggregator: AggregatorFunction
    aggregate_field_name: str | None
    limit_operator: LimitOperator
    limit: Decimal
    window_minutes: int
    filters: tuple[Filter, ...] = field(default=())
    window_precision_seconds: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "grouping_key_names", tuple(sorted(set(self.grouping_key_names))))
        object.__setattr__(self, "filters", tuple(self.filters))
        if self.aggregator is AggregatorFunction.COUNT:
            object.__setattr__(self, "aggregate_field_name", None)
        elif not self.aggregate_field_name:
            raise InvalidRuleError("spec.aggregateFieldName is required unless aggregatorFunctionType is COUNT")
        if not self.grouping_key_names:
            raise InvalidRuleError("spec.groupingKeyNames must name at least one field")

    @property
    def window_ms(self) -> int:
        return self.window_minutes * MS_PER_MINUTE

    @property
    def precision_ms(self) -> int | None:
        """The width of the rule's buckets in ms; None for exact per-event windows."""
        return None if self.window_precision_seconds is None else self.window_precision_seconds * 1000

    @property
    def field_names_used(self) -> frozenset[str]:
        """Fields whose values the rule reads besides its grouping keys: aggregate field and filter fields."""
        names = {flt.field for flt in self.filters}
        if self.aggregate_field_name is not None:
            names.add(self.aggregate_field_name)
        return frozenset(names)

    def window_identity(self) -> tuple[object, ...]:
        """What, when changed, starts the rule's window afresh."""
        return (self.grouping_key_names, self.aggregate_field_name, self.filters, self.window_precision_seconds)

    def to_json(self) -> dict[str, object]:
        """The normalized spec with the contract's camelCase names."""
        spec: dict[str, object] = {
            "state": self.state.value,
            "groupingKeyNames": list(self.grouping_key_names),
            "aggregatorFunctionType": self.aggregator.value,
        }
        if self.aggregate_field_name is not None:
            spec["aggregateFieldName"] = self.aggregate_field_name
        spec["limitOperatorType"] = self.limit_operator.value
        spec["limit"] = canonical_decimal(self.limit)
        spec["windowMinutes"] = self.window_minutes
        spec["filters"] = [flt.to_json() for flt in self.filters]
        if self.window_precision_seconds is not None:
            spec["windowPrecisionSeconds"] = self.window_precision_seconds
        return spec


_SPEC_FIELDS: Final = (
    "state",
    "groupingKeyNames",
    "aggregatorFunctionType",
    "aggregateFieldName",
    "limitOperatorType",
    "limit",
    "windowMinutes",
    "filters",
    "windowPrecisionSeconds",
)
_FILTER_FIELDS: Final = ("field", "operator", "value")


def _shown(value: object) -> str:
    """A spec value as analysts see it in a refusal: compact JSON cut to `PREVIEW_CHARS` (floats, which only a
    FraudRule read from YAML carries, as the JSON number they read as)."""
    if isinstance(value, float) and math.isfinite(value):
        return preview(Decimal(repr(value)))
    try:
        return preview(value)
    except (TypeError, ValueError):
        return preview(str(value))


def _quote_hint(value: float) -> str:
    """What a refusal says of a float (YAML's reading of an unquoted decimal), and how to write it instead."""
    return f"the float {_shown(value)}; quote it: {_shown(repr(value))}"


def _describe(value: object) -> str:
    """`_shown(value)`, after its JSON type unless a scalar's JSON says it (a number, string, boolean or null)."""
    if value is None or isinstance(value, bool | int | str):
        return _shown(value)
    if isinstance(value, Mapping):
        kind = "object"
    elif isinstance(value, list | tuple):
        kind = "array"
    elif isinstance(value, float | Decimal):
        kind = "number"
    else:
        kind = type(value).__name__
    return f"{kind} {_shown(value)}"


def _require(raw: Mapping[str, object], name: str) -> object:
    value = raw.get(name)
    if value is None:
        raise InvalidRuleError(f"spec.{name} is required")
    return value


def _enum_member(enum: type[_E], value: object, where: str) -> _E:
    allowed = ", ".join(member.value for member in enum)
    if not isinstance(value, str) or value not in enum.__members__:
        raise InvalidRuleError(f"{where} must be one of {allowed}, got {_describe(value)}")
    return enum[value]


def _field_name(value: object, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidRuleError(f"{where} must be a non-empty string, got {_describe(value)}")
    return value


def _parse_grouping(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise InvalidRuleError(f"spec.groupingKeyNames must be a non-empty list of field names, got {_describe(value)}")
    names = [_field_name(name, f"spec.groupingKeyNames[{index}]") for index, name in enumerate(value)]
    for name in names:
        if names.count(name) > 1:
            raise InvalidRuleError(f"spec.groupingKeyNames names {_shown(name)} more than once")
    return tuple(sorted(names))


def _parse_limit(value: object) -> Decimal:
    where = "spec.limit"
    number: Decimal | None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, Decimal):
        number = value if value.is_finite() else None
    elif isinstance(value, str):
        number = parse_decimal_text(value)
    elif isinstance(value, float):
        raise InvalidRuleError(f"{where} must be an integer or a decimal string, got {_quote_hint(value)}")
    else:
        number = None
    if number is None:
        raise InvalidRuleError(f"{where} must be an integer or a decimal string, got {_describe(value)}")
    if not is_amount(number):
        raise InvalidRuleError(f"{where} is out of range (at most 100 digits each side of the point): {_shown(value)}")
    return number


def _parse_window_minutes(value: object) -> int:
    where = "spec.windowMinutes"
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRuleError(f"{where} must be an integer, got {_describe(value)}")
    if value < 1:
        raise InvalidRuleError(f"{where} must be at least 1, got {value}")
    if value > MAX_WINDOW_MINUTES:
        raise InvalidRuleError(f"{where} must be at most {MAX_WINDOW_MINUTES} (366 days), got {value}")
    return value


def _parse_precision(value: object, window_minutes: int) -> int | None:
    where = "spec.windowPrecisionSeconds"
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRuleError(f"{where} must be an integer, got {_describe(value)}")
    if value < 1:
        raise InvalidRuleError(f"{where} must be at least 1, got {value}")
    if (window_minutes * 60) % value:
        raise InvalidRuleError(f"{where} must divide windowMinutes * 60 = {window_minutes * 60}, got {value}")
    return value


def _parse_filter_scalar(value: object, where: str) -> FilterScalar:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return _filter_number(Decimal(value), value, where)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise InvalidRuleError(f"{where} must be a finite number, got {value}")
        return _filter_number(value, value, where)
    if isinstance(value, str):
        number = parse_decimal_text(value)
        return value if number is None else _filter_number(number, value, where)
    if isinstance(value, float):
        raise InvalidRuleError(f"{where} must be a string, integer, boolean or null, got {_quote_hint(value)}")
    raise InvalidRuleError(f"{where} must be a string, integer, boolean or null, got {_describe(value)}")


def _filter_number(number: Decimal, value: object, where: str) -> Decimal:
    """`number`, if its normalized text (`canonical_decimal`, as the rule message and the evaluator's state hold it)
    is a number both cores read back: a decimal literal of at most MAX_NUMBER_CHARS characters, its exponent within
    +-MAX_EXPONENT."""
    if number != 0 and (abs(number.adjusted()) > MAX_EXPONENT or len(canonical_decimal(number)) > MAX_NUMBER_CHARS):
        raise InvalidRuleError(
            f"{where} is out of range (written out, at most {MAX_NUMBER_CHARS} characters with an exponent within"
            f" +-{MAX_EXPONENT}): {_shown(value)}"
        )
    return number


def _parse_filter(raw: object, index: int) -> Filter:
    where = f"spec.filters[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidRuleError(f"{where} must be an object with field, operator and value, got {_describe(raw)}")
    for key in raw:
        if key not in _FILTER_FIELDS:
            raise InvalidRuleError(f"{where}.{key} is not a filter field (expected field, operator, value)")
    name = _field_name(raw.get("field"), f"{where}.field")
    op = _enum_member(FilterOperator, raw.get("operator"), f"{where}.operator")
    if "value" not in raw:
        raise InvalidRuleError(f"{where}.value is required")
    raw_value = raw["value"]
    value: FilterValue
    if op.takes_list:
        if not isinstance(raw_value, list) or not raw_value:
            raise InvalidRuleError(
                f"{where}.value must be a non-empty list for operator {op}, got {_describe(raw_value)}"
            )
        value = tuple(_parse_filter_scalar(item, f"{where}.value[{i}]") for i, item in enumerate(raw_value))
    else:
        if isinstance(raw_value, list | Mapping):
            raise InvalidRuleError(
                f"{where}.value must be a single value for operator {op}, got {_describe(raw_value)}"
            )
        value = _parse_filter_scalar(raw_value, f"{where}.value")
        if op.is_ordering and not isinstance(value, Decimal):
            raise InvalidRuleError(f"{where}.value must be a number for operator {op}, got {_describe(raw_value)}")
    return Filter(name, op, value)


def _parse_filters(value: object) -> tuple[Filter, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidRuleError(f"spec.filters must be a list, got {_describe(value)}")
    return tuple(_parse_filter(item, index) for index, item in enumerate(value))


def parse_spec(raw: object) -> RuleSpec:
    """Validate and normalize a raw FraudRule spec; raise InvalidRuleError naming the offending field."""
    if not isinstance(raw, Mapping):
        raise InvalidRuleError(f"spec must be an object, got {_describe(raw)}")
    for key in raw:
        if key not in _SPEC_FIELDS:
            raise InvalidRuleError(f"spec.{key} is not a FraudRule spec field")
    state_raw = raw.get("state")
    state = RuleState.ACTIVE if state_raw is None else _enum_member(RuleState, state_raw, "spec.state")
    grouping = _parse_grouping(_require(raw, "groupingKeyNames"))
    aggregator = _enum_member(
        AggregatorFunction, _require(raw, "aggregatorFunctionType"), "spec.aggregatorFunctionType"
    )
    aggregate_field_name: str | None = None
    if aggregator is not AggregatorFunction.COUNT:
        name = raw.get("aggregateFieldName")
        if name is None:
            raise InvalidRuleError("spec.aggregateFieldName is required unless aggregatorFunctionType is COUNT")
        aggregate_field_name = _field_name(name, "spec.aggregateFieldName")
    limit_operator = _enum_member(LimitOperator, _require(raw, "limitOperatorType"), "spec.limitOperatorType")
    limit = _parse_limit(_require(raw, "limit"))
    window_minutes = _parse_window_minutes(_require(raw, "windowMinutes"))
    filters = _parse_filters(raw.get("filters"))
    precision = _parse_precision(raw.get("windowPrecisionSeconds"), window_minutes)
    return RuleSpec(
        state=state,
        grouping_key_names=grouping,
        aggregator=aggregator,
        aggregate_field_name=aggregate_field_name,
        limit_operator=limit_operator,
        limit=limit,
        window_minutes=window_minutes,
        filters=filters,
        window_precision_seconds=precision,
    )


@dataclass(frozen=True)
class Rule:
    """One generation of a FraudRule as published on the rules topic."""

    rule_id: str
    generation: int
    uid: str
    spec: RuleSpec

    def to_json(self) -> dict[str, object]:
        return {
            "formatVersion": 1 if self.spec.window_precision_seconds is None else 2,
            "ruleId": self.rule_id,
            "generation": self.generation,
            "uid": self.uid,
            "spec": self.spec.to_json(),
        }

    def to_message_value(self) -> bytes:
        """Canonical JSON bytes: equal rules give equal bytes."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json(cls, obj: object) -> Rule:
        """Read Rule JSON, re-validating the spec; InvalidRuleError for anything unusable, RejectedRuleMessageError
        (`unsupported-version`) for a format version this reader does not know."""
        if not isinstance(obj, Mapping):
            raise InvalidRuleError(f"rule message must be a JSON object, got {_describe(obj)}")
        version = obj.get("formatVersion", 1)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise InvalidRuleError(f"rule message formatVersion must be a positive integer, got {_describe(version)}")
        if version > RULE_FORMAT_VERSION:
            raise RejectedRuleMessageError(
                RuleMessageReason.UNSUPPORTED_VERSION,
                f"rule message formatVersion {version} is newer than this reader's {RULE_FORMAT_VERSION}",
            )
        rule_id = obj.get("ruleId")
        if not isinstance(rule_id, str) or not rule_id:
            raise InvalidRuleError(f"rule message ruleId must be a non-empty string, got {_describe(rule_id)}")
        generation = obj.get("generation")
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
            raise InvalidRuleError(
                f"rule message generation must be a non-negative integer, got {_describe(generation)}"
            )
        uid = obj.get("uid")
        if not isinstance(uid, str) or not uid:
            raise InvalidRuleError(f"rule message uid must be a non-empty string, got {_describe(uid)}")
        return cls(rule_id=rule_id, generation=generation, uid=uid, spec=parse_spec(obj.get("spec")))


def parse_rule_message(value: bytes | None) -> Rule | None:
    """The Rule a rules-topic record value holds; None for a tombstone (null value).

    Raises RejectedRuleMessageError whose reason says why the value is unusable: `unparseable` (empty, not JSON),
    `invalid` (not Rule JSON, or an invalid spec) or `unsupported-version`.
    """
    if value is None:
        return None
    if not value:
        raise RejectedRuleMessageError(
            RuleMessageReason.UNPARSEABLE, "rule message is empty (a deletion is a null value, not an empty one)"
        )
    try:
        obj = loads_exact(value)
    except JsonValueError as exc:
        detail = f"rule message is not usable JSON: {exc}"
        raise RejectedRuleMessageError(RuleMessageReason.UNPARSEABLE, detail) from exc
    try:
        return Rule.from_json(obj)
    except InvalidRuleError as exc:
        raise RejectedRuleMessageError(RuleMessageReason.INVALID, str(exc)) from exc
