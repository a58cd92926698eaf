"""Fixtures of every integration test."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def current_evaluator(detector_evaluator: Path) -> Path:
    """The evaluator jar ready before any test starts a detector (tests/conftest.py's detector_evaluator): the
    detectors these tests start load it, and a jar older than services/evaluator would test old code."""
    return detector_evaluator
