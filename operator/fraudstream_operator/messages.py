"""The Rule JSON of a FraudRule (CONTRACT section 4). Validation and normalization belong to fraudstream_rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fraudstream_rules.exceptions import InvalidRuleError
from fraudstream_rules.model import Rule, parse_spec

from .exceptions import InvalidSpecError


def rule_message(key: str, generation: int, uid: str, spec: Mapping[str, Any]) -> bytes:
    """The record value for one generation of a FraudRule; InvalidSpecError if the spec is not a valid rule."""
    try:
        rule_spec = parse_spec(dict(spec))
    except InvalidRuleError as exc:
        raise InvalidSpecError(f"spec is not a valid rule: {exc}") from exc
    value: bytes = Rule(rule_id=key, generation=generation, uid=uid, spec=rule_spec).to_message_value()
    return value
