"""The JVM core's FraudRule spec parsing is Python's twin: the same spec JSON text is accepted by both with the same
normalized spec, or refused by both with the same message (the operator's messages are the ones analysts see; the
detector's must not tell a different story)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fraudstream_rules.exceptions import InvalidRuleError
from fraudstream_rules.json_values import JsonValueError, dumps_exact, loads_exact
from fraudstream_rules.model import parse_spec

from .jvm_engine import JvmEngine
from .spec_cases import NORMALIZED, REFUSED, spec


def python_parse(text: str) -> tuple[object, str | None]:
    """(normalized spec JSON, None) or (None, message), as the JVM harness answers."""
    try:
        parsed = parse_spec(loads_exact(text))
    except (InvalidRuleError, JsonValueError) as exc:
        return None, str(exc)
    return json.loads(dumps_exact(parsed.to_json()), parse_float=Decimal), None


def jvm_parse(jvm_engine: JvmEngine, text: str) -> tuple[object, str | None]:
    response = jvm_engine.call(json.dumps({"parseSpec": text}, ensure_ascii=False))
    invalid = response["invalid"]
    assert invalid is None or isinstance(invalid, str)
    return response["spec"], invalid


def floats_as_decimals(raw: object) -> object:
    """The value with Python floats as the decimals their JSON text reads as (what a rule message can carry)."""
    if isinstance(raw, float):
        return Decimal(repr(raw))
    if isinstance(raw, dict):
        return {key: floats_as_decimals(value) for key, value in raw.items()}
    if isinstance(raw, list):
        return [floats_as_decimals(value) for value in raw]
    return raw


def assert_twins(jvm_engine: JvmEngine, raw: object) -> None:
    text = dumps_exact(floats_as_decimals(raw))
    expected = python_parse(text)
    assert jvm_parse(jvm_engine, text) == expected, text


@pytest.mark.parametrize("raw", [raw for raw, _, _ in NORMALIZED])
def test_accepted_specs_normalize_alike(jvm_engine: JvmEngine, raw: dict[str, object]) -> None:
    assert python_parse(dumps_exact(raw))[1] is None
    assert_twins(jvm_engine, raw)


@pytest.mark.parametrize("raw", [raw for raw, _ in REFUSED if raw is not ...])
def test_refused_specs_are_refused_with_the_same_message(jvm_engine: JvmEngine, raw: object) -> None:
    assert_twins(jvm_engine, raw)


ODD_VALUES: st.SearchStrategy[object] = st.sampled_from(
    [None, True, 0, -1, 1, 7, 60, 3600, 10**20, "60", "", "x", [], ["payerId"], {}, Decimal("0.5"), Decimal("1e3")]
)


@st.composite
def spec_like(draw: st.DrawFn) -> dict[str, object]:
    """A spec that is mostly valid, with fields dropped, added or replaced by odd values."""
    raw = spec(
        windowMinutes=draw(st.sampled_from([1, 5, 60, 1440, 43_200, 527_040, 527_041])),
        windowPrecisionSeconds=draw(st.sampled_from([..., None, 1, 7, 10, 60, 3600, 86_400, 0, -60, "60", True])),
        aggregatorFunctionType=draw(st.sampled_from(["SUM", "COUNT", "AVG", "MIN", "MAX", "MEDIAN"])),
        state=draw(st.sampled_from([..., "ACTIVE", "PAUSE", "DELETE"])),
    )
    for name in draw(st.lists(st.sampled_from([*sorted(raw), "filters", "extra"]), max_size=3)):
        if draw(st.booleans()):
            raw.pop(name, None)
        else:
            raw[name] = draw(ODD_VALUES)
    return raw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=spec_like())
def test_arbitrary_specs_get_the_same_verdict(jvm_engine: JvmEngine, raw: dict[str, object]) -> None:
    assert_twins(jvm_engine, raw)
