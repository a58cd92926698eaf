"""JSON text <-> Python values with numbers kept exact, within limits both cores share.

`loads_exact` reads UTF-8 JSON: every non-integer number as a Decimal holding exactly the digits written
(`0.10` stays `Decimal('0.10')`), integers as int; it refuses NaN/Infinity (not JSON), invalid UTF-8, nesting
deeper than `MAX_NESTING_DEPTH` containers, and number literals longer than `MAX_NUMBER_CHARS` characters or with
an exponent beyond +-`MAX_EXPONENT`. The JVM core (`Json.java`) applies the same limits, so both cores refuse
the same records. `dumps_exact` writes such values back, a Decimal with the digits it holds, so
`dumps_exact(loads_exact(text))` keeps every number as written; strings are written unescaped except that a lone
surrogate (which JSON escapes from `\\ud800` to `\\udfff` can produce) is written as its escape, so the output is
always valid UTF-8. Floats are refused: amounts never travel as binary floating point in this package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Final

MAX_NESTING_DEPTH: Final = 64
MAX_NUMBER_CHARS: Final = 1000
MAX_EXPONENT: Final = 999_999_999

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_EXPONENT: Final = re.compile(r"[eE]([+-]?[0-9]+)$")


class JsonValueError(ValueError):
    """The text is not JSON this package accepts; the message says why, fit for a DLQ detail."""


def _refuse_constant(name: str) -> object:
    raise JsonValueError(f"{name} is not a JSON number")


def _checked_number(literal: str) -> str:
    if len(literal) > MAX_NUMBER_CHARS:
        raise JsonValueError(f"JSON number longer than {MAX_NUMBER_CHARS} characters")
    exponent = _EXPONENT.search(literal)
    if exponent is not None and abs(int(exponent.group(1))) > MAX_EXPONENT:
        raise JsonValueError(f"JSON number exponent beyond +-{MAX_EXPONENT}")
    return literal


def _int(literal: str) -> int:
    return int(_checked_number(literal))


def _decimal(literal: str) -> Decimal:
    return Decimal(_checked_number(literal))


_STRING_LITERAL: Final = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET: Final = re.compile(r"[\[\]{}]")


def _too_deep(text: str) -> bool:
    """Whether JSON `text` (valid JSON) nests containers more than MAX_NESTING_DEPTH deep anywhere, a value that a
    later duplicate key replaces included, as the JVM core's streaming parser sees it (`[]` is 1 deep)."""
    depth = 0
    for bracket in _BRACKET.finditer(_STRING_LITERAL.sub("", text)):
        if bracket.group() in "[{":
            depth += 1
            if depth > MAX_NESTING_DEPTH:
                return True
        else:
            depth -= 1
    return False


def loads_exact(data: bytes | str) -> object:
    """Parse JSON (UTF-8 when bytes) with exact numbers; raise JsonValueError saying why for anything else."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonValueError(f"not valid UTF-8 at byte {exc.start}") from exc
    else:
        text = data
    try:
        value = json.loads(text, parse_float=_decimal, parse_int=_int, parse_constant=_refuse_constant)
    except JsonValueError:
        raise
    except RecursionError as exc:
        raise JsonValueError(f"JSON nested deeper than {MAX_NESTING_DEPTH} levels") from exc
    except (ValueError, InvalidOperation) as exc:
        raise JsonValueError(f"not JSON: {exc}") from exc
    if _too_deep(text):
        raise JsonValueError(f"JSON nested deeper than {MAX_NESTING_DEPTH} levels")
    return value


def escape_lone_surrogates(text: str) -> str:
    """`text` with every lone surrogate code point replaced by its JSON escape (`\\ud800`); others unchanged."""
    if text.isascii() or _LONE_SURROGATE.search(text) is None:
        return text
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def quote(text: str) -> str:
    """A JSON string literal: not ASCII-escaped, lone surrogates escaped (Python's and Java's output agree)."""
    return escape_lone_surrogates(json.dumps(text, ensure_ascii=False))


def dumps_exact(value: object, *, sort_keys: bool = False) -> str:
    """Compact JSON for a value made of dict/list/tuple/str/int/bool/None/finite Decimal."""
    parts: list[str] = []
    _encode(value, parts, sort_keys)
    return "".join(parts)


def _encode(value: object, parts: list[str], sort_keys: bool) -> None:
    if value is None:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, str):
        parts.append(quote(value))
    elif isinstance(value, int):
        parts.append(str(value))
    elif isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"not a finite decimal: {value!r}")
        parts.append(str(value))
    elif isinstance(value, Mapping):
        items = sorted(value.items()) if sort_keys else value.items()
        parts.append("{")
        for index, (key, item) in enumerate(items):
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be strings, got {key!r}")
            if index:
                parts.append(",")
            parts.append(quote(key))
            parts.append(":")
            _encode(item, parts, sort_keys)
        parts.append("}")
    elif isinstance(value, list | tuple):
        parts.append("[")
        for index, item in enumerate(value):
            if index:
                parts.append(",")
            _encode(item, parts, sort_keys)
        parts.append("]")
    else:
        raise TypeError(f"cannot encode {type(value).__name__} as exact JSON: {value!r}")
