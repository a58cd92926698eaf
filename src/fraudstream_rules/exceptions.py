"""The errors of the rule model and evaluation core: one root, one line each below it."""

from __future__ import annotations


class FraudstreamError(Exception):
    """Root of every error this package raises on purpose."""


class InvalidRuleError(FraudstreamError):
    """A rule spec or rule message is unusable; the message names the offending field for the user."""


class CorruptStateError(FraudstreamError):
    """Serialized detector or group state cannot be read back."""


class InvalidTransactionError(FraudstreamError):
    """A transaction cannot be evaluated; `reason` is the short text that goes into the DLQ `error` header."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
