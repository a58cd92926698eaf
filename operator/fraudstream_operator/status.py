"""The one status writer: every status change of a FraudRule goes through `write_status`.

It sets `observedGeneration`, keeps a condition's `lastTransitionTime` unless the condition's status flips, and
patches only what changed. Change detection covers `observedGeneration`, `published`, and each condition's
type, status, reason and message; `lastTransitionTime` alone never causes a patch.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from datetime import UTC, datetime
from typing import Any

from .conditions import Condition, Publication


def _timestamp(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _merged_conditions(current: list[Mapping[str, Any]], condition: Condition, now: datetime) -> list[dict[str, Any]]:
    """`current` with `condition` in place of the one of its type; other types are kept as they are."""
    previous = next((c for c in current if c.get("type") == condition.type), None)
    if previous is not None and previous.get("status") == condition.status and previous.get("lastTransitionTime"):
        transition = str(previous["lastTransitionTime"])
    else:
        transition = _timestamp(now)
    others = [dict(c) for c in current if c.get("type") != condition.type]
    return [*others, condition.as_status(transition)]


def status_changes(
    current: Mapping[str, Any],
    generation: int,
    condition: Condition,
    publication: Publication | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The status fields to merge-patch so that `current` reflects `condition` for `generation`; {} if none.

    `publication` None leaves `status.published` as it is (a failed generation keeps the last one published).
    Conditions are patched as a whole list, since a merge patch replaces lists.
    """
    changes: dict[str, Any] = {}
    if current.get("observedGeneration") != generation:
        changes["observedGeneration"] = generation
    if publication is not None and current.get("published") != publication.as_status():
        changes["published"] = publication.as_status()
    conditions: list[Mapping[str, Any]] = list(current.get("conditions") or [])
    if not any(condition.matches(c) for c in conditions):
        changes["conditions"] = _merged_conditions(conditions, condition, now or datetime.now(UTC))
    return changes


def write_status(
    patch: MutableMapping[str, Any],
    current: Mapping[str, Any],
    generation: int,
    condition: Condition,
    publication: Publication | None = None,
    now: datetime | None = None,
) -> bool:
    """Puts the changed status fields into `patch` (kopf's `patch.status`); True if there were any."""
    changes = status_changes(current, generation, condition, publication, now)
    patch.update(changes)
    return bool(changes)
