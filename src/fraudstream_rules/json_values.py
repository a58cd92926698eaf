"""JSON text <-> Python values with numbers kept exact.

`loads_exact` reads every non-integer JSON number as a Decimal holding exactly the digits written
(`0.10` stays `Decimal('0.10')`), integers as int, and refuses NaN/Infinity, which are not JSON.
`dumps_exact` writes such values back, rendering a Decimal with the digits it holds, so
`dumps_exact(loads_exact(text))` keeps every number as it was written. Floats are refused: amounts
never travel as binary floating point in this package.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation


class JsonValueError(ValueError):
    """The text is not JSON this package accepts."""


def _refuse_constant(name: str) -> object:
    raise JsonValueError(f"{name} is not a JSON number")


def loads_exact(data: bytes | str) -> object:
    """Parse JSON (UTF-8 when bytes) with exact numbers; raise JsonValueError for anything else."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return json.loads(text, parse_float=Decimal, parse_constant=_refuse_constant)
    except JsonValueError:
        raise
    except (ValueError, InvalidOperation, RecursionError) as exc:
        raise JsonValueError(str(exc) or type(exc).__name__) from exc


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
        parts.append(json.dumps(value, ensure_ascii=False))
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
            parts.append(json.dumps(key, ensure_ascii=False))
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
