"""The local stack's detector component builds the evaluator it runs, unless told to run another jar."""

from __future__ import annotations

from pathlib import Path

import pytest

from fraudstream_localstack import components
from fraudstream_localstack.stack import StackConfig


def built_by_detector(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """The calls `components.detector` made to build the evaluator (its build replaced by a counter)."""
    calls: list[int] = []

    def build() -> Path:
        calls.append(1)
        return tmp_path / "evaluator.jar"

    monkeypatch.setattr(components, "build_evaluator", build)
    components.detector(StackConfig.isolated(tmp_path), tmp_path / "checkpoint", log_dir=tmp_path)
    return calls


def test_the_detector_component_builds_the_checkouts_evaluator_first(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("FRAUDSTREAM_EVALUATOR_JAR", raising=False)
    assert built_by_detector(monkeypatch, tmp_path) == [1]


def test_a_jar_named_by_the_environment_is_run_as_it_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FRAUDSTREAM_EVALUATOR_JAR", str(tmp_path / "other.jar"))
    assert built_by_detector(monkeypatch, tmp_path) == []
