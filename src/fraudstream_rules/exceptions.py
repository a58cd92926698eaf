"""The errors of the rule model and evaluation core: one root, one line each below it."""

from __future__ import annotations


class FraudstreamError(Exception):
    """Root of every error this package raises on purpose."""


class InvalidRuleError(FraudstreamError):
    """A rule spec is unusable; the message names the offending field for the user."""


class RejectedRuleMessageError(FraudstreamError):
    """A rules-topic record the detector cannot apply; `reason` is the metric label (see `model.RuleMessageReason`)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class CorruptStateError(FraudstreamError):
    """Serialized detector or group state cannot be read back."""


class InvalidTransactionError(FraudstreamError):
    """A transaction cannot be evaluated: `error` is the DLQ `error` header (one word), `detail` its explanation."""

    def __init__(self, error: str, detail: str) -> None:
        super().__init__(f"{error}: {detail}")
        self.error = error
        self.detail = detail
