"""Errors of fraudstream_kafka: what a broker refused, said so that an operator knows what to change."""

from __future__ import annotations


class KafkaSecurityError(RuntimeError):
    """Root: a broker refused this client for a security reason; retrying unchanged does not help."""


class CredentialsRefusedError(KafkaSecurityError):
    """A broker refused the client's TLS handshake or its SASL authentication (wrong password, certificate, CA)."""


class NotAuthorizedError(KafkaSecurityError):
    """An ACL is missing: the broker refused an operation to the authenticated principal."""
