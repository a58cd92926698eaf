"""Exact JSON reading and writing."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fraudstream_rules.json_values import JsonValueError, dumps_exact, loads_exact


@pytest.mark.parametrize(
    "text",
    [
        '{"a":0.10,"b":1E+3,"c":-0.0,"d":12345678901234567890.123456789,"e":[true,false,null,"\\u00e9x"]}',
        "[]",
        '{"nested":{"deep":[1,2.50,{"x":"y"}]}}',
        "-0",
        '"caf\u00e9"',
    ],
)
def test_round_trip_keeps_every_digit(text: str) -> None:
    assert dumps_exact(loads_exact(text)) == dumps_exact(loads_exact(dumps_exact(loads_exact(text))))
    assert loads_exact(dumps_exact(loads_exact(text))) == loads_exact(text)


def test_numbers_are_decimal_and_int() -> None:
    assert loads_exact(b'{"a":0.10,"b":3}') == {"a": Decimal("0.10"), "b": 3}
    assert dumps_exact({"a": Decimal("0.10"), "b": 3}) == '{"a":0.10,"b":3}'


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a":-Infinity}', "{", "", "\ud800"])
def test_loads_refuses(text: str) -> None:
    with pytest.raises(JsonValueError):
        loads_exact(text)


@pytest.mark.parametrize(
    ("value", "error"),
    [(1.5, TypeError), (Decimal("NaN"), ValueError), ({1: "a"}, TypeError), ({"a": object()}, TypeError)],
)
def test_dumps_refuses(value: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        dumps_exact(value)


def test_dumps_sorts_keys_on_request() -> None:
    assert dumps_exact({"b": 1, "a": {"d": 2, "c": 3}}, sort_keys=True) == '{"a":{"c":3,"d":2},"b":1}'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("\ud800", '"\\ud800"'),
        ("a\udfffb", '"a\\udfffb"'),
        ("\U0001d11e\u00e9", '"\U0001d11e\u00e9"'),
        ({"\udc00": ["\ud834"]}, '{"\\udc00":["\\ud834"]}'),
    ],
)
def test_lone_surrogates_are_written_as_escapes_so_the_output_is_utf8(value: object, text: str) -> None:
    assert dumps_exact(value) == text
    assert dumps_exact(value).encode("utf-8")
    assert loads_exact(text.encode()) == value


def test_json_escapes_of_lone_surrogates_read_back_and_write_back_the_same() -> None:
    raw = b'{"a":"\\ud800x","b":"\\ud834\\udd1e"}'
    assert dumps_exact(loads_exact(raw)) == '{"a":"\\ud800x","b":"\U0001d11e"}'


def test_a_value_nested_too_deep_is_refused_even_when_a_later_duplicate_key_replaces_it() -> None:
    deep = "[" * 64 + "]" * 64  # 65 containers with the object around it
    with pytest.raises(JsonValueError, match="nested deeper than 64"):
        loads_exact('{"x":' + deep + ',"x":0}')
    assert loads_exact('{"x":' + deep[1:-1] + ',"x":0}') == {"x": 0}


def test_brackets_in_strings_do_not_nest() -> None:
    text = '{"x":"' + "[{" * 100 + '\\"' + "{[" * 100 + '"}'
    assert loads_exact(text) == {"x": "[{" * 100 + '"' + "{[" * 100}


def test_a_field_name_of_any_length_is_read() -> None:
    name = "n" * 1_000_000
    assert loads_exact('{"' + name + '":1}') == {name: 1}
