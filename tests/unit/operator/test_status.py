"""The status writer: what it patches, and when lastTransitionTime moves."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fraudstream_operator.conditions import Condition, Publication, not_ready, ready
from fraudstream_operator.exceptions import InvalidSpecError, KafkaUnavailableError
from fraudstream_operator.status import status_changes, write_status

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
NOW_TEXT = "2026-11-22T12:00:00Z"
EARLIER = "2026-11-21T08:30:00Z"
PUBLICATION = Publication(generation=3, topic="rules", partition=0, offset=41)
READY = ready(PUBLICATION)
UNAVAILABLE = not_ready(KafkaUnavailableError("broker down"))


def condition_status(condition: Condition, transition: str = EARLIER) -> dict[str, Any]:
    return condition.as_status(transition)


def published_status(generation: int = 3, condition: Condition = READY) -> dict[str, Any]:
    return {
        "observedGeneration": generation,
        "published": PUBLICATION.as_status(),
        "conditions": [condition_status(condition)],
    }


@pytest.mark.parametrize(
    ("current", "generation", "condition", "publication", "expected"),
    [
        pytest.param(
            {},
            3,
            READY,
            PUBLICATION,
            {
                "observedGeneration": 3,
                "published": PUBLICATION.as_status(),
                "conditions": [READY.as_status(NOW_TEXT)],
            },
            id="empty-status-gets-everything",
        ),
        pytest.param(published_status(), 3, READY, PUBLICATION, {}, id="unchanged-patches-nothing"),
        pytest.param(
            published_status() | {"conditions": [condition_status(READY, "2000-01-01T00:00:00Z")]},
            3,
            READY,
            PUBLICATION,
            {},
            id="only-lastTransitionTime-differs",
        ),
        pytest.param(
            published_status(),
            4,
            not_ready(InvalidSpecError("spec.limit is out of range")),
            None,
            {
                "observedGeneration": 4,
                "conditions": [not_ready(InvalidSpecError("spec.limit is out of range")).as_status(NOW_TEXT)],
            },
            id="status-flips-so-time-moves-and-published-stays",
        ),
        pytest.param(
            published_status(condition=UNAVAILABLE),
            3,
            not_ready(KafkaUnavailableError("still down")),
            None,
            {"conditions": [not_ready(KafkaUnavailableError("still down")).as_status(EARLIER)]},
            id="message-changes-status-stays-time-kept",
        ),
        pytest.param(
            published_status(condition=UNAVAILABLE),
            3,
            READY,
            PUBLICATION,
            {"conditions": [READY.as_status(NOW_TEXT)]},
            id="recovery-flips-back",
        ),
        pytest.param(
            published_status(generation=2),
            3,
            READY,
            PUBLICATION,
            {"observedGeneration": 3},
            id="only-generation-differs",
        ),
        pytest.param(
            published_status(),
            3,
            READY,
            Publication(generation=3, topic="rules", partition=0, offset=42),
            {"published": {"generation": 3, "topic": "rules", "partition": 0, "offset": 42}},
            id="only-publication-differs",
        ),
        pytest.param(
            published_status() | {"conditions": [{"type": "Ready", "status": "True"}]},
            3,
            READY,
            PUBLICATION,
            {"conditions": [READY.as_status(NOW_TEXT)]},
            id="condition-missing-reason-and-time",
        ),
    ],
)
def test_status_changes(
    current: dict[str, Any],
    generation: int,
    condition: Condition,
    publication: Publication | None,
    expected: dict[str, Any],
) -> None:
    assert status_changes(current, generation, condition, publication, now=NOW) == expected


def test_other_condition_types_are_kept() -> None:
    other = {"type": "Degraded", "status": "False", "reason": "Fine", "message": "", "lastTransitionTime": EARLIER}
    current = published_status(condition=UNAVAILABLE) | {"conditions": [other, condition_status(UNAVAILABLE)]}

    changes = status_changes(current, 3, READY, PUBLICATION, now=NOW)

    assert changes["conditions"] == [other, READY.as_status(NOW_TEXT)]


@pytest.mark.parametrize(
    ("current", "changed"),
    [({}, True), (published_status(), False)],
    ids=["writes", "leaves-patch-empty"],
)
def test_write_status_fills_the_patch_only_with_changes(current: dict[str, Any], changed: bool) -> None:
    patch: dict[str, Any] = {}

    assert write_status(patch, current, 3, READY, PUBLICATION, now=NOW) is changed
    assert bool(patch) is changed


def test_lastTransitionTime_defaults_to_the_current_time() -> None:
    before = datetime.now(UTC).replace(microsecond=0)

    changes = status_changes({}, 1, READY, PUBLICATION)

    written = datetime.strptime(changes["conditions"][0]["lastTransitionTime"], "%Y-%m-%dT%H:%M:%SZ")
    assert written.replace(tzinfo=UTC) >= before
