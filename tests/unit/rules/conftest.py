"""Fixtures of the rule-core tests: the JVM evaluator's harness, built and started once per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fraudstream_localstack.layout import build_evaluator

from .jvm_engine import JvmEngine


@pytest.fixture(scope="session")
def jvm_engine() -> Iterator[JvmEngine]:
    """The JVM engine; builds the jar first (never skips: a failed build fails the tests that use it)."""
    engine = JvmEngine(build_evaluator())
    yield engine
    engine.close()
