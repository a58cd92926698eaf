"""Kubernetes events on FraudRules: one per record sent to the topic, one per failure."""

from __future__ import annotations

import kopf

from .conditions import Publication
from .exceptions import OperatorError, Reason


def published(body: kopf.Body, publication: Publication) -> None:
    kopf.event(
        body,
        type="Normal",
        reason=Reason.PUBLISHED,
        message=f"generation {publication.generation} published to {publication.topic} "
        f"(partition {publication.partition}, offset {publication.offset})",
    )


def tombstoned(body: kopf.Body, topic: str, because: str = "") -> None:
    """`because`, if given, is appended to the message as the tombstone's cause."""
    message = f"tombstone written to {topic}" + (f": {because}" if because else "")
    kopf.event(body, type="Normal", reason=Reason.TOMBSTONED, message=message)


def failed(body: kopf.Body, error: OperatorError) -> None:
    kopf.event(body, type="Warning", reason=error.reason, message=str(error))
