"""The two builders of the Ready condition, and how conditions compare."""

from __future__ import annotations

import pytest

from fraudstream_operator.conditions import READY, Condition, Publication, not_ready, ready
from fraudstream_operator.exceptions import (
    ClusterUnavailableError,
    InvalidSpecError,
    KafkaUnavailableError,
    OperatorError,
    PublishRejectedError,
    Reason,
)


def test_ready_names_where_the_generation_landed() -> None:
    condition = ready(Publication(generation=7, topic="rules", partition=0, offset=1234))

    assert condition == Condition(
        READY, "True", Reason.PUBLISHED, "generation 7 is on topic rules at partition 0, offset 1234"
    )


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (InvalidSpecError("spec.limit is out of range"), "InvalidSpec"),
        (KafkaUnavailableError("no broker answered"), "KafkaUnavailable"),
        (PublishRejectedError("record too large"), "PublishRejected"),
        (ClusterUnavailableError("403 Forbidden"), "ClusterUnavailable"),
    ],
)
def test_not_ready_carries_the_error_reason_and_message(error: OperatorError, reason: str) -> None:
    condition = not_ready(error)

    assert (condition.type, condition.status, condition.reason, condition.message) == (
        "Ready",
        "False",
        reason,
        str(error),
    )


@pytest.mark.parametrize(
    ("raw", "matches"),
    [
        ({"type": "Ready", "status": "True", "reason": "Published", "message": "m"}, True),
        ({"type": "Ready", "status": "True", "reason": "Published", "message": "m", "lastTransitionTime": "x"}, True),
        ({"type": "Ready", "status": "False", "reason": "Published", "message": "m"}, False),
        ({"type": "Ready", "status": "True", "reason": "InvalidSpec", "message": "m"}, False),
        ({"type": "Ready", "status": "True", "reason": "Published", "message": "other"}, False),
        ({"type": "Synced", "status": "True", "reason": "Published", "message": "m"}, False),
        ({}, False),
    ],
    ids=["same", "time-ignored", "status", "reason", "message", "type", "empty"],
)
def test_condition_matches_ignores_only_the_transition_time(raw: dict[str, str], matches: bool) -> None:
    assert Condition("Ready", "True", "Published", "m").matches(raw) is matches


@pytest.mark.parametrize(
    ("error_type", "permanent"),
    [
        (InvalidSpecError, True),
        (KafkaUnavailableError, False),
        (PublishRejectedError, False),
        (ClusterUnavailableError, False),
    ],
)
def test_only_an_invalid_spec_is_not_retried(error_type: type[OperatorError], permanent: bool) -> None:
    assert error_type.permanent is permanent


def test_reasons_are_the_words_users_see() -> None:
    assert [reason.value for reason in Reason] == [
        "Published",
        "Tombstoned",
        "InvalidSpec",
        "KafkaUnavailable",
        "PublishRejected",
        "ClusterUnavailable",
    ]
