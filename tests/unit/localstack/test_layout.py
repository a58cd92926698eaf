from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fraudstream_detector.session import _artifact
from fraudstream_localstack.layout import MissingArtifactError, require, versions, write_env_file
from fraudstream_localstack.processes import NotReadyError, StopSignals, wait_for


def test_versions_pins_every_component() -> None:
    pins = versions()
    for key in (
        "KAFKA_VERSION",
        "SPARK_VERSION",
        "SPARK_KAFKA_CONNECTOR_VERSION",
        "KUBERNETES_VERSION",
        "ETCD_VERSION",
    ):
        assert pins[key], key
    assert pins["SPARK_VERSION"] == "4.3.0"


def test_missing_artifact_names_the_provisioning_step(tmp_path: Path) -> None:
    with pytest.raises(MissingArtifactError, match=r"scripts/provision.sh k8s"):
        require(tmp_path / "kube-apiserver", "k8s")


@pytest.mark.parametrize(
    ("jar", "artifact"),
    [
        ("spark-sql-kafka-0-10_2.13-4.2.0.jar", "spark-sql-kafka-0-10_2.13"),
        ("kafka-clients-3.9.2.jar", "kafka-clients"),
        ("commons-pool2-2.13.1.jar", "commons-pool2"),
        ("scala-library-2.13.15.jar", "scala-library"),
        ("zstd-jni-1.5.6-10.jar", "zstd-jni"),
    ],
)
def test_jar_artifact_names_ignore_versions(jar: str, artifact: str) -> None:
    assert _artifact(Path(jar)) == artifact


def test_wait_for_returns_the_first_truthy_result_and_names_the_last_error() -> None:
    calls = iter([None, False, "ready"])
    assert wait_for(lambda: next(calls), 5, "thing", interval_s=0.01) == "ready"

    def failing() -> None:
        raise ConnectionRefusedError("nope")

    with pytest.raises(NotReadyError, match=r"widget not ready .*ConnectionRefusedError"):
        wait_for(failing, 0.05, "widget", interval_s=0.01)


def test_wait_for_gives_up_at_once_when_the_process_died() -> None:
    from fraudstream_localstack.processes import ProcessDiedError

    calls = []

    def died() -> None:
        calls.append(1)
        raise ProcessDiedError("kafka exited with 1")

    with pytest.raises(ProcessDiedError):
        wait_for(died, 60, "kafka", interval_s=0.01)
    assert len(calls) == 1


def test_wait_for_gives_up_at_once_when_a_watched_process_exits(tmp_path: Path) -> None:
    from fraudstream_localstack.processes import ManagedProcess, ProcessDiedError

    exiting = ManagedProcess("quitter", ["sh", "-c", "echo bye; exit 3"], tmp_path / "quitter.log").start()
    try:
        began = time.monotonic()
        with pytest.raises(ProcessDiedError, match=r"quitter exited with 3; log tail:\nbye"):
            wait_for(lambda: False, 60, "something the quitter would do", interval_s=0.01, watching=[exiting])
        assert time.monotonic() - began < 30, "the wait ended with the process, not at its deadline"
    finally:
        exiting.stop()


@pytest.mark.parametrize("value", ["http://127.0.0.1:9090/metrics", "/a dir/with spaces", "it's $HOME; `x`", ""])
def test_an_env_file_gives_back_its_values_when_sourced(tmp_path: Path, value: str) -> None:
    env_file = tmp_path / "sub" / "stack.env"
    write_env_file(env_file, {"FIRST": value, "SECOND": "b"})
    shell = subprocess.run(["bash", "-c", f'source {env_file} && printf "%s|%s" "$FIRST" "$SECOND"'],
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert shell.stdout == f"{value}|b"
    assert [p.name for p in env_file.parent.iterdir()] == ["stack.env"]


@pytest.fixture
def restore_signal_handlers() -> Iterator[None]:
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.mark.usefixtures("restore_signal_handlers")
def test_only_the_first_signal_interrupts_so_a_second_cannot_cut_the_cleanup_short(
    capfd: pytest.CaptureFixture[str],
) -> None:
    StopSignals()
    stopped: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        finally:  # the cleanup of an aborted start, which a second signal reaches part-way
            os.kill(os.getpid(), signal.SIGINT)
            stopped.append("everything")
    assert stopped == ["everything"]
    assert "SIGINT while stopping: still stopping" in capfd.readouterr().err


@pytest.mark.usefixtures("restore_signal_handlers")
def test_a_second_signal_while_a_started_supervisor_stops_is_told_and_changes_nothing(
    capfd: pytest.CaptureFixture[str],
) -> None:
    signals = StopSignals()
    signals.started()
    os.kill(os.getpid(), signal.SIGTERM)
    signals.wait(interval_s=0.01)  # returns: the first signal ends the wait
    assert "still stopping" not in capfd.readouterr().err
    os.kill(os.getpid(), signal.SIGINT)  # during the stop that follows
    assert "SIGINT while stopping: still stopping" in capfd.readouterr().err


@pytest.mark.usefixtures("restore_signal_handlers")
def test_a_signal_aborts_a_start_and_later_ends_the_wait(capfd: pytest.CaptureFixture[str]) -> None:
    signals = StopSignals()
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
    signals.started()
    ticks: list[int] = []

    def tick() -> None:
        ticks.append(1)
        if len(ticks) == 3:
            threading.Thread(target=os.kill, args=(os.getpid(), signal.SIGINT)).start()

    signals.wait(tick=tick, interval_s=0.01)
    assert len(ticks) >= 3
    assert "still stopping" not in capfd.readouterr().err
