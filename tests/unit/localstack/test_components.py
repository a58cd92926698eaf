"""The local stack's detector builds the evaluator it will run when it starts, not before, unless told to run
another jar."""

from __future__ import annotations

import os
from pathlib import Path
from typing import cast

import pytest

from fraudstream_detector.session import evaluator_jar
from fraudstream_kafka.acls import Component
from fraudstream_localstack import components, layout
from fraudstream_localstack.processes import wait_for
from fraudstream_localstack.stack import LocalStack, StackConfig


class NotBuilt(Exception):
    """A preparation that fails."""


def test_a_jar_named_by_the_environment_is_run_as_it_is(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def build() -> Path:
        raise AssertionError("built although a jar was named")

    monkeypatch.setattr(layout, "build_evaluator", build)
    monkeypatch.setenv("FRAUDSTREAM_EVALUATOR_JAR", str(tmp_path / "other.jar"))
    assert layout.evaluator_to_run() == tmp_path / "other.jar"


def test_a_relative_name_is_the_checkouts_path_as_the_detector_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRAUDSTREAM_EVALUATOR_JAR", ".cache/evaluator/fraudstream-evaluator.jar")
    monkeypatch.chdir("/")
    assert layout.evaluator_to_run() == layout.EVALUATOR_JAR
    monkeypatch.chdir(layout.ROOT)  # the local stack runs the detector here (PythonService: cwd=ROOT)
    assert evaluator_jar().resolve() == layout.EVALUATOR_JAR.resolve()


def test_without_a_named_jar_the_checkouts_jar_is_built_from_its_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FRAUDSTREAM_EVALUATOR_JAR", raising=False)
    assert layout.evaluator_to_run() == layout.EVALUATOR_JAR
    assert layout.EVALUATOR_JAR.is_file() and layout.EVALUATOR_TESTS_JAR.is_file()


def test_an_empty_name_names_no_jar_for_the_stack_nor_the_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FRAUDSTREAM_EVALUATOR_JAR", "")
    assert layout.evaluator_to_run() == layout.EVALUATOR_JAR
    assert evaluator_jar().resolve() == layout.EVALUATOR_JAR.resolve()


def test_a_failed_preparation_ends_a_services_start_before_anything_is_launched() -> None:
    def prepare() -> None:
        raise NotBuilt

    service = components.PythonService("svc", "no_such_module", Component.GENERATOR, prepare=prepare)
    with pytest.raises(NotBuilt):
        service.start(cast(LocalStack, object()))  # the stack is not reached
    assert service.pid is None


def test_the_detector_prepares_its_evaluator_when_started_not_when_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[int] = []

    def prepare() -> Path:
        calls.append(1)
        raise NotBuilt

    monkeypatch.setattr(components, "evaluator_to_run", prepare)
    service = components.detector(StackConfig.isolated(tmp_path), tmp_path / "checkpoint", log_dir=tmp_path)
    assert calls == []
    with pytest.raises(NotBuilt):
        service.start(cast(LocalStack, object()))
    assert calls == [1]


def test_the_detector_runs_a_preparation_it_is_given_in_place_of_the_build(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def build() -> Path:
        raise AssertionError("the default preparation ran")

    def given() -> Path:
        raise NotBuilt

    monkeypatch.setattr(components, "evaluator_to_run", build)
    service = components.detector(StackConfig.isolated(tmp_path), tmp_path / "cp", log_dir=tmp_path, prepare=given)
    with pytest.raises(NotBuilt):
        service.start(cast(LocalStack, object()))


def test_a_build_over_its_time_is_stopped_whole_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    script = tmp_path / "scripts" / "provision.sh"
    script.parent.mkdir()
    pid_file = tmp_path / "build.pid"
    # A build that outlasts its time in two processes: the script (the group's leader) and a child of its own.
    script.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nsleep 60 &\nsleep 60\n")
    script.chmod(0o755)
    monkeypatch.setattr(layout, "ROOT", tmp_path)
    with pytest.raises(layout.EvaluatorBuildError, match=r"took over 2 s; stopped"):
        layout.build_evaluator(timeout_s=2)
    group = int(pid_file.read_text())

    def group_gone() -> bool:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        return False

    wait_for(group_gone, 10, "the build's process group to go")
