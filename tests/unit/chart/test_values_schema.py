"""values.schema.json follows the alertmanager chart's conventions, and its defaults are values.yaml's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.unit.chart.rendering import CHART

SCHEMA: dict[str, Any] = json.loads((CHART / "values.schema.json").read_text())
VALUES: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())


def _walk(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for key, sub in schema.get("properties", {}).items():
        where = f"{path}.{key}" if path else key
        yield where, sub
        yield from _walk(sub, where)


def _value(path: str) -> Any:
    node: Any = VALUES
    for part in path.split("."):
        node = node[part]
    return node


def test_schema_is_draft_07_and_closed_at_the_top() -> None:
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert SCHEMA["additionalProperties"] is False
    assert set(SCHEMA["required"]) == set(SCHEMA["properties"]) == set(VALUES)


@pytest.mark.parametrize(("path", "schema"), list(_walk(SCHEMA)), ids=lambda x: x if isinstance(x, str) else "")
def test_every_key_has_a_description_and_the_values_yaml_default(path: str, schema: dict[str, Any]) -> None:
    assert schema.get("description"), f"{path}: no description"
    assert "default" in schema, f"{path}: no default"
    assert schema["default"] == _value(path), f"{path}: schema default differs from values.yaml"


@pytest.mark.parametrize(
    ("path", "schema"),
    [(p, s) for p, s in _walk(SCHEMA) if s.get("type") == "object" and "properties" in s],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_structured_blocks_are_closed_and_list_their_required_keys(path: str, schema: dict[str, Any]) -> None:
    assert schema["additionalProperties"] is False, path
    is_resources = set(schema["properties"]) == {"requests", "limits"}
    expected = set() if is_resources else set(schema["properties"])
    assert set(schema["required"]) == expected, path
    assert set(schema["properties"]) == set(_value(path)) or is_resources, f"{path}: keys differ from values.yaml"


def test_every_values_key_is_in_the_schema() -> None:
    documented = {path for path, _ in _walk(SCHEMA)}

    def keys(node: Any, path: str = "") -> Iterator[str]:
        if isinstance(node, dict):
            for key, sub in node.items():
                where = f"{path}.{key}" if path else key
                yield where
                parent = dict(_walk(SCHEMA)).get(where, {})
                if "properties" in parent:
                    yield from keys(sub, where)

    assert set(keys(VALUES)) <= documented
