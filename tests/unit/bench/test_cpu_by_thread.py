from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from bench.cpu_by_thread import CpuUse, Ledger, ProcReader, Reading, Sampler, UseKey, process_kind, stat_fields


def stat_line(tid: int, name: str, utime: int, stime: int, started: int) -> str:
    """A /proc/<pid>/task/<tid>/stat line as Linux writes it (proc(5)), with the fields the sampler reads set."""
    fields = ["S", "1", "1", "1", "0", "-1", "4194560", "0", "0", "0", "0", str(utime), str(stime), "0", "0", "20",
              "0", "40", "0", str(started), "123456", "789"]  # fmt: skip
    return f"{tid} ({name}) " + " ".join(fields) + "\n"


def thread(process: str, name: str, ticks: int, started: int = 0) -> CpuUse:
    return CpuUse(process, name, started, ticks)


def whole(process: str, ticks: int, started: int = 0) -> CpuUse:
    return CpuUse(process, None, started, ticks)


def reading(at_s: float, busy: int, uses: Mapping[tuple[int, int], CpuUse], uptime: int = 0) -> Reading:
    """A reading of these uses, keyed by (id, started) and by whether each is a thread."""
    return Reading(
        at_s, uptime, busy, {(i, started, use.thread is not None): use for (i, started), use in uses.items()}
    )


def test_a_stat_line_splits_at_the_last_parenthesis_so_a_name_may_hold_spaces_and_parentheses() -> None:
    assert stat_fields("7 (a (b) c) S 1 7 7") == ("a (b) c", ["S", "1", "7", "7"])
    with pytest.raises(ValueError, match="not a /proc stat line"):
        stat_fields("garbage")


def test_a_stat_line_reads_as_cpu_ticks_and_start_and_as_a_thread_also_its_name() -> None:
    line = stat_line(42, "C2 CompilerThre", utime=150, stime=30, started=5000)
    assert CpuUse.parse("detector_jvm", line, thread=True) == CpuUse("detector_jvm", "C2 CompilerThre", 5000, 180)
    assert CpuUse.parse("detector_jvm", line, thread=False) == CpuUse("detector_jvm", None, 5000, 180)


def test_processes_are_known_by_their_command_line_and_spark_s_jvm_before_the_detector_s_module() -> None:
    jvm = "java -cp /x org.apache.spark.deploy.SparkSubmit --name fraudstream_detector pyspark-shell"
    assert process_kind(jvm) == "detector_jvm"
    assert process_kind("python -m fraudstream_detector --checkpoint x") == "detector_python"
    assert process_kind("java -Xmx1g kafka.Kafka server.properties") == "broker_jvm"
    assert process_kind("python -m fraudstream_generator --rate 1000") == "generator"
    assert process_kind("/usr/sbin/sshd -D") == "other"


def test_the_first_reading_is_the_baseline_and_the_next_charges_each_gain_to_its_groups() -> None:
    ledger = Ledger()
    ledger.add(
        reading(0.0, 1_000, {
            (10, 0): whole("detector_jvm", 2_000),
            (11, 0): thread("detector_jvm", "Executor task l", 500),
            (12, 0): thread("detector_jvm", "C2 CompilerThre", 900),
            (20, 0): whole("broker_jvm", 300),
            (21, 0): thread("broker_jvm", "C1 CompilerThre", 50),
            (30, 0): whole("other", 7),
            (40, 0): thread("generator", "python3", 5),  # no group looks into the generator's threads
        })
    )  # fmt: skip
    assert ledger.intervals == []
    ledger.add(
        reading(1.0, 1_180, {
            (10, 0): whole("detector_jvm", 2_100),
            (11, 0): thread("detector_jvm", "Executor task l", 560),
            (12, 0): thread("detector_jvm", "C2 CompilerThre", 920),
            (20, 0): whole("broker_jvm", 315),
            (21, 0): thread("broker_jvm", "C1 CompilerThre", 60),
            (30, 0): whole("other", 8),
            (40, 0): thread("generator", "python3", 9),
        })
    )  # fmt: skip
    [interval] = ledger.intervals
    charged = interval.charged
    assert (interval.end_s, interval.length_s) == (1.0, 1.0)
    assert charged["detector_jvm"] == 100 and charged["detector_tasks"] == 60 and charged["detector_jit"] == 20
    assert charged["broker_jvm"] == 15 and charged["broker_jit"] == 10 and charged["other"] == 1
    assert charged["generator"] == 0 and charged["detector_gc"] == 0 and charged["machine"] == 180


def test_a_process_s_main_thread_and_the_process_are_told_apart_though_they_share_an_id() -> None:
    ledger = Ledger()
    ledger.add(reading(0.0, 0, {(7, 0): whole("broker_jvm", 100)}))
    for at_s, process_ticks, thread_ticks in ((1.0, 130, 9), (2.0, 160, 12)):
        uses = {
            (7, 0, False): whole("broker_jvm", process_ticks),
            (7, 0, True): thread("broker_jvm", "java", thread_ticks),
        }
        ledger.add(Reading(at_s, 0, 0, uses))
    assert [i.charged["broker_jvm"] for i in ledger.intervals] == [30, 30]


def test_a_thread_missed_by_one_reading_is_charged_its_gain_since_it_was_last_read_not_its_lifetime() -> None:
    ledger = Ledger()
    ledger.add(reading(0.0, 0, {(1, 0): thread("detector_jvm", "Executor task l", 10_000)}))
    ledger.add(reading(1.0, 0, {}))  # the process could not be read this time
    ledger.add(reading(2.0, 0, {(1, 0): thread("detector_jvm", "Executor task l", 10_150)}))
    assert [i.charged["detector_tasks"] for i in ledger.intervals] == [0, 150]


def test_a_process_that_started_after_the_first_reading_is_charged_all_its_time_one_from_before_none() -> None:
    ledger = Ledger()
    ledger.add(reading(0.0, 0, {}, uptime=1_000))
    ledger.add(
        reading(1.0, 0, {
            (1, 1_050): whole("generator", 40, started=1_050),  # new in this interval
            (2, 900): whole("broker_jvm", 70_000, started=900),  # was there, not read before
        }, uptime=1_100)
    )  # fmt: skip
    ledger.add(reading(2.0, 0, {(2, 900): whole("broker_jvm", 70_030, started=900)}, uptime=1_200))
    assert [(i.charged["generator"], i.charged["broker_jvm"]) for i in ledger.intervals] == [(40, 0), (0, 30)]


def test_a_reused_tid_with_a_new_start_is_another_thread() -> None:
    ledger = Ledger()
    ledger.add(reading(0.0, 0, {(5, 100): thread("detector_jvm", "Executor task l", 900, started=100)}, uptime=200))
    ledger.add(reading(1.0, 0, {(5, 250): thread("detector_jvm", "Executor task l", 12, started=250)}, uptime=300))
    assert ledger.intervals[0].charged["detector_tasks"] == 12


def test_windows_hold_the_intervals_that_end_in_them_and_divide_by_their_length() -> None:
    ledger = Ledger()
    ledger.add(reading(0.0, 0, {(1, 0): whole("generator", 0)}))
    for at_s, ticks in ((4.0, 100), (9.0, 300), (12.5, 650)):  # the reading at 9 s came a second late
        ledger.add(reading(at_s, 2 * ticks, {(1, 0): whole("generator", ticks)}))
    first, second = ledger.windows(window_s=10.0, ticks_per_s=100)
    assert (first["from_s"], first["to_s"], first["generator"], first["machine"]) == (0.0, 10.0, 0.333, 0.667)
    assert (second["from_s"], second["generator"], second["machine"]) == (10.0, 1.0, 2.0)


def test_a_window_whose_readings_took_no_time_is_left_out_and_a_window_must_last() -> None:
    ledger = Ledger()
    for _ in range(2):
        ledger.add(reading(0.0, 0, {(1, 0): whole("generator", 0)}))
    assert ledger.windows(window_s=10.0, ticks_per_s=100) == []
    with pytest.raises(ValueError, match="must last"):
        ledger.windows(window_s=0, ticks_per_s=100)


def fake_process(proc: Path, pid: int, cmdline: str, threads: dict[int, str], ticks: int = 10) -> None:
    (proc / str(pid) / "task").mkdir(parents=True)
    (proc / str(pid) / "cmdline").write_bytes(cmdline.replace(" ", "\0").encode())
    (proc / str(pid) / "stat").write_text(stat_line(pid, cmdline.split()[0], ticks, 0, started=100 + pid))
    for tid, name in threads.items():
        (proc / str(pid) / "task" / str(tid)).mkdir()
        (proc / str(pid) / "task" / str(tid) / "stat").write_text(stat_line(tid, name, 1, 0, started=100 + tid))


def test_the_reader_reads_every_process_and_the_threads_only_of_the_processes_a_thread_group_looks_into(
    tmp_path: Path,
) -> None:
    fake_process(tmp_path, 10, "java kafka.Kafka server.properties", {10: "java", 11: "C2 CompilerThre"})
    fake_process(tmp_path, 20, "python3 -m fraudstream_generator", {20: "python3", 21: "rdk:broker1"})
    (tmp_path / "30").mkdir()  # ended while /proc was read: no stat
    (tmp_path / "self").mkdir()
    read = ProcReader(tmp_path)
    uses: Mapping[UseKey, CpuUse] = read()
    assert uses == {
        (10, 110, False): CpuUse("broker_jvm", None, 110, 10),
        (10, 110, True): CpuUse("broker_jvm", "java", 110, 1),
        (11, 111, True): CpuUse("broker_jvm", "C2 CompilerThre", 111, 1),
        (20, 120, False): CpuUse("generator", None, 120, 10),
    }
    (tmp_path / "10" / "cmdline").write_bytes(b"changed")  # a process's kind is read once, when first seen...
    assert read()[(10, 110, False)].process == "broker_jvm"
    # ...and again after an exec, which keeps the pid and start and changes the name: a shell that became Spark's JVM.
    (tmp_path / "20" / "stat").write_text(stat_line(20, "java", 10, 0, started=120))
    (tmp_path / "20" / "cmdline").write_bytes(b"java\0org.apache.spark.deploy.SparkSubmit")
    assert read()[(20, 120, False)].process == "detector_jvm"


def test_the_reader_reads_this_process_and_its_threads_cpu_from_proc() -> None:
    read = ProcReader(threaded=frozenset({"other"}))

    def mine() -> tuple[CpuUse, CpuUse]:
        uses = read()
        [process] = [u for (pid, _, one), u in uses.items() if pid == os.getpid() and not one]
        [me] = [u for (tid, _, one), u in uses.items() if tid == threading.get_native_id() and one]
        return process, me

    before = mine()
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:  # spends CPU, which /proc must show as this thread's and process's
        pass
    after = mine()
    assert [u.process for u in after] == ["other", "other"] and after[1].started == before[1].started
    assert all(a.ticks - b.ticks >= 0.2 * os.sysconf("SC_CLK_TCK") for a, b in zip(after, before, strict=True))


def test_the_sampler_reports_its_windows_and_what_each_group_holds() -> None:
    now = [100.0]
    uses: dict[UseKey, CpuUse] = {(1, 0, False): whole("broker_jvm", 0)}
    sampler = Sampler(interval_s=3600, read=lambda: dict(uses), clock=lambda: now[0]).start()
    now[0], uses[(1, 0, False)] = 102.0, whole("broker_jvm", os.sysconf("SC_CLK_TCK"))
    sampler.sample()
    sampler.stop()
    report = sampler.report(window_s=10)
    assert "broker_jit" in report["groups"] and "machine" in report["groups"]
    [window] = report["windows"]
    assert (window["from_s"], window["broker_jvm"], window["broker_jit"]) == (0.0, 0.5, 0.0)
    assert window["machine"] >= 0 and report["failed_readings"] == 0 and report["last_error"] is None


def test_the_sampler_reads_on_its_own_thread_and_reports_a_failed_reading_without_stopping() -> None:
    calls = [0]

    def read() -> dict[UseKey, CpuUse]:
        calls[0] += 1
        if calls[0] == 2:
            raise OSError("a /proc read failed")
        return {(1, 0, False): whole("generator", calls[0])}

    now = [0.0]

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    sampler = Sampler(interval_s=0.001, read=read, clock=clock).start()
    deadline = time.monotonic() + 30
    while calls[0] < 5 and time.monotonic() < deadline:
        time.sleep(0.01)  # polls the sampler's progress, with a deadline
    sampler.stop()
    assert calls[0] >= 5  # it read on after the failure
    report = sampler.report(window_s=1000)
    assert report["failed_readings"] == 1 and report["last_error"] == "OSError: a /proc read failed"
    assert report["windows"][0]["generator"] > 0
