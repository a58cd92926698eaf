"""Errors of the operator, each carrying the condition reason users see in `kubectl get fr`.

The retry policy lives in the type: a `permanent` error is not retried until the spec changes; every other
error is retried with backoff and clears on its own once the cause goes away (a broker back online).
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar


class Reason(StrEnum):
    """`status.conditions[type=Ready].reason` values, and the reasons of the Kubernetes events posted."""

    PUBLISHED = "Published"
    TOMBSTONED = "Tombstoned"
    INVALID_SPEC = "InvalidSpec"
    KAFKA_UNAVAILABLE = "KafkaUnavailable"
    PUBLISH_REJECTED = "PublishRejected"
    CLUSTER_UNAVAILABLE = "ClusterUnavailable"


class OperatorError(Exception):
    """Root of the operator's errors: `reason` goes straight into the Ready condition."""

    reason: ClassVar[Reason]
    permanent: ClassVar[bool] = False


class InvalidSpecError(OperatorError):
    reason = Reason.INVALID_SPEC
    permanent = True


class KafkaUnavailableError(OperatorError):
    reason = Reason.KAFKA_UNAVAILABLE


class DeliveryUnknownError(KafkaUnavailableError):
    """A record was sent but never acknowledged: the broker may still have appended it."""


class PublishRejectedError(OperatorError):
    reason = Reason.PUBLISH_REJECTED


class ClusterUnavailableError(OperatorError):
    reason = Reason.CLUSTER_UNAVAILABLE
