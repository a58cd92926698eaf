"""The Ready condition. Exactly two functions build one: `ready` on success and `not_ready` on failure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .exceptions import OperatorError, Reason

READY = "Ready"


@dataclass(frozen=True)
class Publication:
    """Where one generation of a rule landed on the rules topic."""

    generation: int
    topic: str
    partition: int
    offset: int

    def as_status(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
        }


@dataclass(frozen=True)
class Condition:
    """A status condition without its lastTransitionTime, which only the status writer decides."""

    type: str
    status: str
    reason: str
    message: str

    def matches(self, raw: Mapping[str, Any]) -> bool:
        """Equal to a condition read from the API, ignoring lastTransitionTime."""
        return (raw.get("type"), raw.get("status"), raw.get("reason"), raw.get("message")) == (
            self.type,
            self.status,
            self.reason,
            self.message,
        )

    def as_status(self, last_transition_time: str) -> dict[str, Any]:
        return {
            "type": self.type,
            "status": self.status,
            "reason": self.reason,
            "message": self.message,
            "lastTransitionTime": last_transition_time,
        }


def ready(publication: Publication) -> Condition:
    """Ready=True: this generation's delivery report came back from the broker."""
    message = (
        f"generation {publication.generation} is on topic {publication.topic} "
        f"at partition {publication.partition}, offset {publication.offset}"
    )
    return Condition(READY, "True", Reason.PUBLISHED, message)


def not_ready(error: OperatorError) -> Condition:
    """Ready=False with the error's reason and its message."""
    return Condition(READY, "False", error.reason, str(error))
