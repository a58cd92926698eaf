"""Fixtures of every integration test."""

from __future__ import annotations

from pathlib import Path

import pytest

from fraudstream_localstack.layout import build_evaluator


@pytest.fixture(scope="session", autouse=True)
def current_evaluator() -> Path:
    """The evaluator's jar built from the checkout's sources as they are now, before any test starts a detector: the
    detectors these tests start load it, and a jar older than services/evaluator would test old code."""
    return build_evaluator()
