"""make soak's pure parts: the GC log, the per-minute series, silences and transition stalls, and its plumbing."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from bench import run, soak
from bench.run import AlertSample
from bench.soak import DiskSample, GcPause, Marking, Minute, Transition

T0 = 1_800_000_000_000.0


def alert(tx_s: float, latency_ms: float) -> AlertSample:
    """An alert for a transaction `tx_s` seconds into the window, received `latency_ms` later."""
    tx_ms = int(T0 + tx_s * 1000)
    return AlertSample(tx_ms + latency_ms, tx_ms, tx_ms, tx_ms)


@pytest.mark.parametrize(
    ("line", "expected"),
    [("[1795454339625ms] GC(5) Pause Young (Normal) (G1 Evacuation Pause) 178M->25M(256M) 0.645ms",
      GcPause(1795454339625, 25.0, 0.645)),
     ("[17ms] GC(9) Pause Remark 1.5G->1G(4G) 12.5ms", GcPause(17, 1024.0, 12.5)),
     ("[18ms] GC(10) Pause Full (G1 Compaction Pause) 900M->512K(4096M) 250.0ms", GcPause(18, 0.5, 250.0)),
     ("[19ms] GC(11) Pause Young (Concurrent Start) (G1 Humongous Allocation) 3000M->2900M(4096M) 8.000ms",
      GcPause(19, 2900.0, 8.0)),
     ("[20ms] GC(12) Concurrent Mark Cycle 30.100ms", None),
     ("[21ms] GC(13) Pause Cleanup 2900M->2900M(4096M) 0.1ms", GcPause(21, 2900.0, 0.1)),
     ("[22ms] Using G1", None),
     ("", None),
     ("GC(5) Pause Young (Normal) (G1 Evacuation Pause) 178M->25M(256M) 0.645ms", None)],
)  # fmt: skip
def test_gc_log_pauses_are_read_with_their_heap_after_and_duration(line: str, expected: GcPause | None) -> None:
    assert soak.parse_gc_log(line) == ([expected] if expected else [])


def liveness_table(at_ms: int, phase: str, rows: list[tuple[str, int, int]]) -> str:
    """A G1 region liveness table as `gc+liveness=trace` prints it: (type, used, prev-live) per region."""
    lines = [f"[{at_ms}ms] GC(7) ### PHASE {phase} @ 12.345",
             f"[{at_ms}ms] GC(7) ### HEAP  reserved: 0x0000000700000000-0x0000000800000000  region-size: 2097152",
             f"[{at_ms}ms] GC(7) ###",
             f"[{at_ms}ms] GC(7) ###   type                         address-range       used  prev-live  next-live"
             "          gc-eff     remset   state  code-roots"]  # fmt: skip
    for i, (kind, used, prev_live) in enumerate(rows):
        lines.append(
            f"[{at_ms}ms] GC(7) ###   {kind:<4} 0x{0x700000000 + i * 0x200000:016x}-0x{0x700200000 + i * 0x200000:016x}"
            f"    {used}    {prev_live}    {used}               -       4416   UNTRA         16"
        )
    lines.append(f"[{at_ms}ms] GC(7) ### SUMMARY  capacity: 3458.00 MB  used: 1311.05 MB / 37.91 %")
    return "\n".join(lines) + "\n"


def test_a_markings_old_live_bytes_are_those_of_its_post_cleanup_table() -> None:
    mb = 1024 * 1024
    regions = [("OLD", 2 * mb, mb), ("HUMS", 2 * mb, 2 * mb), ("HUMC", mb, mb), ("EDEN", 2 * mb, 2 * mb),
               ("SURV", mb, mb), ("FREE", 0, 0), ("OLD", 2 * mb, mb // 2)]  # fmt: skip
    log = (
        liveness_table(100, "Post-Marking", [("OLD", 2 * mb, 2 * mb)])  # before the cleanup: not yet current
        + "[150ms] GC(7) Pause Remark 9M->9M(64M) 1.000ms\n"
        + liveness_table(200, "Post-Cleanup", regions)
        + "[201ms] GC(7) Pause Cleanup 9M->9M(64M) 0.500ms\n"
        + liveness_table(300, "Post-Cleanup", [("OLD", 2 * mb, mb)])[:-100]  # still being written: no summary yet
    )
    assert soak.parse_markings(log) == [Marking(200, 4.5)]
    assert soak.parse_gc_log(log) == [GcPause(150, 9.0, 1.0), GcPause(201, 9.0, 0.5)]
    assert soak.parse_markings("[1ms] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 9M->4M(64M) 1ms\n") == []


@pytest.mark.parametrize(
    ("duration_ms", "minutes"),
    [(0, 0), (3_000, 0), (3_001, 1), (60_000, 1), (63_000, 1), (63_001, 2), (120_040, 2), (3_600_000, 60)],
)
def test_a_final_fragment_of_3_s_or_less_is_not_a_minute(duration_ms: float, minutes: int) -> None:
    assert soak.minute_count(T0, T0 + duration_ms) == minutes


def test_per_minute_groups_alerts_by_transaction_time_and_gc_and_disk_by_when_they_happened() -> None:
    window = [alert(1, 10), alert(2, 30), alert(59.9, 200), alert(121, 40), alert(-1, 999), alert(180, 999)]
    gcs = [GcPause(int(T0 + 5_000), 900.0, 20.0), GcPause(int(T0 + 50_000), 700.0, 30.0),
           GcPause(int(T0 + 170_000), 800.0, 5.0), GcPause(int(T0 - 1), 1.0, 1.0)]  # fmt: skip
    disk = [
        DiskSample(T0 + 61_000, 2 * soak.MB),
        DiskSample(T0 + 1_000, 1 * soak.MB),
        DiskSample(T0 + 59_000, 3 * soak.MB),
    ]
    markings = [Marking(int(T0 + 150_000), 600.04), Marking(int(T0 + 130_000), 500.0), Marking(int(T0 + 181_000), 1.0)]
    assert soak.per_minute(window, T0, T0 + 180_000, gcs, disk, markings) == [
        Minute(1, 3, 30.0, 200.0, 200.0, heap_after_gc_mb=700.0, gc_pause_ms=50.0, state_disk_mb=3.0),
        Minute(2, 0, None, None, None, heap_after_gc_mb=None, gc_pause_ms=0.0, state_disk_mb=2.0),
        Minute(3, 1, 40.0, 40.0, 40.0, heap_after_gc_mb=800.0, gc_pause_ms=5.0, state_disk_mb=None, old_live_mb=600.0),
    ]


def test_per_minute_of_an_empty_window() -> None:
    assert soak.per_minute([], T0, T0 + 2_000) == []
    assert soak.per_minute([], T0, T0 + 60_000) == [Minute(1, 0, None, None, None, None, 0.0, None)]


def test_a_silence_is_bounded_by_the_previous_alert_and_by_the_transaction_arriving() -> None:
    # Received at 1.010 s, 1.030 s (its transaction at 1.020 s), 5.000 s (its transaction at 2.000 s).
    alerts = [alert(1, 10), alert(1.02, 10), alert(2, 3_000)]
    assert soak.silences(alerts) == [(T0 + 1_000, T0 + 1_010), (T0 + 1_020, T0 + 1_030), (T0 + 2_000, T0 + 5_000)]
    assert soak.silences([]) == []


def steady(until_s: float, every_s: float = 0.1, latency_ms: float = 20) -> list[AlertSample]:
    return [alert(i * every_s, latency_ms) for i in range(int(until_s / every_s))]


def test_a_transition_stall_is_the_longest_silence_near_it_while_input_waits() -> None:
    # Alerts every 100 ms at 20 ms latency; around 60 s nothing comes out for 2.5 s, then the backlog drains.
    alerts = [a for a in steady(120) if not 59.0 <= (a.transaction_ts_ms - T0) / 1000 < 61.5]
    alerts += [AlertSample(T0 + 61_500 + i, int(T0 + 59_000 + i * 100), 0, 0) for i in range(25)]
    commits = [(0, T0 - 5_000), (1, T0 + 60_000), (2, T0 + 100_000), (3, T0 + 130_000)]
    got = soak.transition_stalls(alerts, commits, T0, T0 + 120_000, reach_ms=10_000)
    # The drained backlog's first 21 alerts waited 2 500 down to 520 ms: late, and all near batch 1's commit.
    assert got == [Transition(1, 60.0, 2_500.0, late_alerts=21), Transition(2, 100.0, 20.0, late_alerts=0)]


def test_a_late_alert_counts_for_the_nearest_commit_within_reach() -> None:
    commits = [(0, T0 - 3_000), (1, T0 + 20_000), (2, T0 + 30_000), (3, T0 + 200_000)]
    late_at_s = [2.0, 14.0, 21.0, 24.9, 25.0, 25.1, 29.0, 39.0, 40.0, 41.0, 60.0]
    alerts = [*steady(100), *(alert(at, 501) for at in late_at_s), alert(22.0, 500)]  # 500 ms is not late
    got = soak.transition_stalls(alerts, commits, T0, T0 + 100_000, reach_ms=10_000)
    # 2 s is nearer batch 0's commit, before the window; 25 s is as near to both and goes to the earlier; 40 s is just
    # within reach, 41 and 60 s are beyond it; batch 3's commit is after the window.
    assert [(t.batch, t.late_alerts) for t in got] == [(1, 4), (2, 4)]


def test_the_soak_report_counts_the_late_alerts_of_the_window_and_those_near_transitions() -> None:
    watcher = soak.Soak()
    watcher.commits = [(3, T0 + 30_000)]
    window = [*steady(60), alert(31.0, 501), alert(50.0, 800), alert(52.0, 500)]
    report = watcher.report(window, T0, T0 + 60_000)
    assert report["late_alerts"] == 2 and report["late_alerts_near_transitions"] == 1
    assert [t["late_alerts"] for t in report["transitions"]] == [1]


def test_a_transition_with_no_alert_anywhere_near_it_has_no_stall() -> None:
    alerts = steady(10)
    got = soak.transition_stalls(alerts, [(4, T0 + 50_000)], T0, T0 + 60_000, reach_ms=10_000)
    assert got == [Transition(4, 50.0, None)]
    assert soak.transition_stalls([], [(4, T0 + 50_000)], T0, T0 + 60_000) == [Transition(4, 50.0, None)]


BATCH_3 = (
    "2026-11-25 23:12:26,290 INFO fraudstream_detector.pipeline batch 3: 296354 rows, durations "
    "{'triggerExecution': 303813, 'queryPlanning': 1318, 'commitOffsets': 205, 'latestOffset': 684, "
    "'addBatch': 301359, 'walCommit': 72}, state [(11339, 576, {'rocksdbCommitFlushLatency': 51, "
    "'rocksdbCommitFileSyncLatencyMs': 495, 'rocksdbGetCount': 46710}), (1734155, 946, "
    "{'rocksdbCommitFlushLatency': 178, 'rocksdbChangeLogWriterCommitLatencyMs': 167, 'rocksdbPutCount': 2963340})]"
)
BATCH_4 = (
    "2026-11-25 23:17:30,000 INFO fraudstream_detector.pipeline batch 4: 300000 rows, durations "
    "{'queryPlanning': 310, 'getBatch': 2, 'latestOffset': 20, 'walCommit': 40, 'addBatch': 300900, "
    "'commitOffsets': 90}, state []"
)
PROGRESS_LOG = "\n".join(
    [
        "2026-11-25 23:12:25,100 INFO py4j.clientserver Received command c on object id p0",
        BATCH_3,
        BATCH_4,
        "2026-11-25 23:22:30,000 INFO fraudstream_detector.pipeline batch 5: 1 rows, durations {'addBatch': 3, "
        "state [(",
    ]
)


def test_transition_costs_come_from_the_progress_of_its_batch_and_the_next() -> None:
    progress = soak.parse_batch_progress(PROGRESS_LOG)
    assert sorted(progress) == [3, 4], "a line whose reprs do not parse is skipped"
    assert progress[3].operators[1] == (946.0, {"rocksdbCommitFlushLatency": 178.0,
                                                "rocksdbChangeLogWriterCommitLatencyMs": 167.0,
                                                "rocksdbPutCount": 2963340.0})  # fmt: skip
    got = soak.with_costs(Transition(3, 12.0, 2_400.0), progress)
    assert got == Transition(
        3, 12.0, 2_400.0,
        state_commit_ms=1_522.0,
        rocksdb_commit_ms={"rocksdbCommitFlushLatency": 229.0, "rocksdbCommitFileSyncLatencyMs": 495.0,
                           "rocksdbChangeLogWriterCommitLatencyMs": 167.0},
        spark_ms={"commitOffsets": 205.0, "latestOffset": 20.0, "walCommit": 40.0, "queryPlanning": 310.0,
                  "getBatch": 2.0},
    )  # fmt: skip
    last = soak.with_costs(Transition(4, 312.0, 900.0), progress)
    assert last.spark_ms == {"commitOffsets": 90.0} and last.state_commit_ms == 0.0, "no next batch logged yet"
    assert soak.with_costs(Transition(9, 1.0, None), progress) == Transition(9, 1.0, None)


def timeline(operator: str, batch: int, partition: int, *times: int | None, records: int = 10) -> str:
    """A TaskTimeline line: started, firstRecord, rulesCaughtUp, lastRecord, closed (None: -)."""
    started, first, caught_up, last, closed = ("-" if t is None else str(t) for t in times)
    return (
        f"26/11/26 17:58:19 INFO TaskTimeline: task timeline: operator={operator} batch={batch} partition={partition} "
        f"started={started} firstRecord={first} rulesCaughtUp={caught_up} lastRecord={last} closed={closed} "
        f"records={records}"
    )


TIMELINE_LOG = "\n".join(
    [
        timeline("evaluate", 3, 0, 1_000, 1_100, 1_100, 301_000, 301_400),
        timeline("evaluate", 3, 1, 1_000, 1_100, 1_150, 301_050, 301_600),
        timeline("report", 3, 2, 1_000, 1_200, None, 301_100, 302_000),
        timeline("report", 3, 3, 1_000, 1_200, None, 301_100, 301_900),
        "26/11/26 17:58:19 INFO BucketState: sweep of /tmp/x#1: read 213337 groups",
        timeline("evaluate", 4, 0, 302_300, 302_700, 302_900, 302_900, None, records=3),
        timeline("evaluate", 4, 0, 302_300, 302_700, 302_900, 600_000, 600_500),
        timeline("evaluate", 4, 1, 302_250, 302_800, 302_800, 600_000, 600_500),
        timeline("evaluate", 5, 0, 601_000, None, None, None, None, records=0),
    ]
)


def test_task_timelines_are_read_from_the_detector_log() -> None:
    spans = soak.parse_task_timelines(TIMELINE_LOG)
    assert len(spans) == 7, "other lines are skipped, and a task's last line tells it"
    assert spans[2] == soak.TaskSpan("report", 3, 2, 1_000, 1_200, None, 301_100, 302_000, 10)
    assert spans[4] == soak.TaskSpan("evaluate", 4, 0, 302_300, 302_700, 302_900, 600_000, 600_500, 10)
    assert spans[-1] == soak.TaskSpan("evaluate", 5, 0, 601_000, None, None, None, None, 0), "still running"


def test_a_transition_divides_into_the_parts_its_stateful_tasks_saw() -> None:
    spans = soak.parse_task_timelines(TIMELINE_LOG)
    assert soak.task_costs(3, spans) == {
        "evaluate_last_record_to_closed": 301_600.0 - 301_050,
        "report_closed_after_evaluate": 302_000.0 - 301_600,
        "closed_to_next_started": 302_300.0 - 302_000,
        "started_to_first_record": 302_800.0 - 302_300,
        "rules_catch_up": 302_900.0 - 302_800,
        "evaluate_gap": 302_900.0 - 301_050,
    }
    # Batch 4 has no report task logged and batch 5's running task has no record yet: only what is known is reported.
    assert soak.task_costs(4, spans) == {
        "evaluate_last_record_to_closed": 500.0,
        "closed_to_next_started": 601_000.0 - 600_500,
    }
    assert soak.task_costs(9, spans) == {}
    got = soak.with_costs(Transition(3, 12.0, 2_400.0), {}, spans)
    assert got.tasks_ms == soak.task_costs(3, spans) and got.state_commit_ms is None


def test_commit_times_and_the_size_of_the_state_come_from_the_checkpoint_location(tmp_path: Path) -> None:
    assert soak.commit_times(tmp_path) == [] and soak.tree_bytes(tmp_path / "absent") == 0
    (tmp_path / "commits").mkdir()
    for batch, mtime_s in ((0, 1_800_000_000), (1, 1_800_000_300), (10, 1_800_000_600)):
        (tmp_path / "commits" / str(batch)).write_text("v1\n{}")
        os.utime(tmp_path / "commits" / str(batch), (mtime_s, mtime_s))
    (tmp_path / "commits" / ".1.crc").write_text("x")
    assert soak.commit_times(tmp_path) == [(0, 1.8e12), (1, 1.8e12 + 300_000), (10, 1.8e12 + 600_000)]
    (tmp_path / "state" / "0").mkdir(parents=True)
    (tmp_path / "state" / "0" / "1.changelog").write_bytes(b"x" * 1000)
    assert soak.tree_bytes(tmp_path) == 3 * len("v1\n{}") + 1 + 1000


def test_the_detector_jvm_is_the_java_process_in_its_process_group(tmp_path: Path) -> None:
    for pid, comm, pgrp in ((10, "python3", 10), (11, "java", 10), (12, "java", 99), (13, "bash (x) y", 10)):
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} ({comm}) S 1 {pgrp} {pgrp} 0 -1 4194560 0 0")
    (tmp_path / "self").mkdir()
    (tmp_path / "14").mkdir()  # exited while we looked: no stat
    assert soak.process_group_java(10, tmp_path) == 11
    assert soak.process_group_java(99, tmp_path) == 12
    assert soak.process_group_java(7, tmp_path) is None


def test_the_soak_report_adds_the_contract_keys(tmp_path: Path) -> None:
    watcher = soak.Soak()
    watcher.gc_log = tmp_path / "gc.log"
    watcher.gc_log.write_text(
        f"[{int(T0 + 1_000)}ms] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 9M->4M(64M) 1ms\n"
        + liveness_table(int(T0 + 2_000), "Post-Cleanup", [("OLD", 2 * soak.MB, 3 * soak.MB // 2)])
    )
    watcher.disk = [DiskSample(T0 + 30_000, soak.MB)]
    watcher.commits = [(3, T0 + 30_000)]
    window = steady(60)
    report = watcher.report(window, T0, T0 + 60_000)
    assert report["p999_ms"] == 20.0 and report["max_stall_ms"] == 20.0
    assert report["late_alerts"] == 0 and report["late_alerts_near_transitions"] == 0
    assert report["minutes"] == [
        {"minute": 1, "alerts": 600, "p50_ms": 20.0, "p99_ms": 20.0, "max_ms": 20.0, "heap_after_gc_mb": 4.0,
         "gc_pause_ms": 1.0, "state_disk_mb": 1.0, "old_live_mb": 1.5}
    ]  # fmt: skip
    assert report["transitions"] == [
        {"batch": 3, "at_s": 30.0, "stall_ms": 20.0, "late_alerts": 0, "state_commit_ms": None,
         "rocksdb_commit_ms": None, "spark_ms": None, "tasks_ms": None}
    ]  # fmt: skip
    result: dict[str, Any] = {"rate_tps": 10.0, "duration_s": 60.0, **report}
    watcher.plot(
        tmp_path / "soak.png", json.loads(json.dumps(result)), [(a.received_ms, a.latency_ms) for a in window], T0
    )
    assert (tmp_path / "soak.png").stat().st_size > 10_000


def test_without_a_detector_jvm_the_soak_says_why_it_has_no_heap_series(tmp_path: Path) -> None:
    watcher = soak.Soak(sample_interval_s=0.05)
    (tmp_path / "checkpoint").mkdir()
    watcher.watch(run.Measurement(tmp_path, tmp_path / "checkpoint", None, time.time() * 1000, 0.2))
    assert len(watcher.disk) >= 3
    report = watcher.report([], T0, T0 + 60_000)
    assert report["gc_log"].startswith("no java process") and report["minutes"][0]["heap_after_gc_mb"] is None


@pytest.mark.parametrize(
    ("argv", "forwarded", "interval_s", "reach_ms"),
    [([], [], 10.0, 10_000.0),
     (["--duration-s", "120", "--rate", "200", "--sample-interval-s", "2"], ["--duration-s", "120", "--rate", "200"],
      2.0, 10_000.0),
     (["--stall-reach-s", "5", "--profile", "flink-demo"], ["--profile", "flink-demo"], 10.0, 5_000.0)],
)  # fmt: skip
def test_soak_options_reach_bench_run_after_its_defaults(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], forwarded: list[str], interval_s: float, reach_ms: float
) -> None:
    calls: list[tuple[list[str], Any]] = []

    def main(args: list[str], watcher: Any) -> int:
        calls.append((args, watcher))
        return 0

    monkeypatch.setattr(run, "main", main)
    assert soak.main(argv) == 0
    [(args, watcher)] = calls
    defaults = ["--duration-s", "3600", "--output", str(run.RESULTS / "soak.json"), "--label", "soak"]
    assert args == defaults + forwarded  # later flags win in argparse: SOAK_ARGS override the defaults
    assert (watcher.sample_interval_s, watcher.reach_ms) == (interval_s, reach_ms)


def test_the_soak_report_splits_each_transition_with_the_detectors_progress_log(tmp_path: Path) -> None:
    watcher = soak.Soak()
    watcher.detector_log = tmp_path / "detector.log"
    watcher.detector_log.write_text(PROGRESS_LOG + "\n" + TIMELINE_LOG)
    watcher.commits = [(3, T0 + 30_000)]
    report = watcher.report(steady(60), T0, T0 + 60_000)
    (transition,) = report["transitions"]
    assert transition["state_commit_ms"] == 1_522.0
    assert transition["spark_ms"]["queryPlanning"] == 310.0
    assert transition["tasks_ms"]["evaluate_gap"] == 1_850.0


def test_the_soak_keeps_every_commit_it_saw_though_spark_deletes_the_old_ones(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    listings = iter([[(0, T0)], [(1, T0 + 60_000)], [(1, T0 + 60_000), (2, T0 + 120_000)]])
    last: list[tuple[int, float]] = []

    def listing(_: Path) -> list[tuple[int, float]]:
        last[:] = next(listings, last)
        return list(last)

    monkeypatch.setattr(soak, "commit_times", listing)
    watcher = soak.Soak(sample_interval_s=0.05)
    watcher.watch(run.Measurement(tmp_path, tmp_path / "checkpoint", None, time.time() * 1000, 0.3))
    assert watcher.commits == [(0, T0), (1, T0 + 60_000), (2, T0 + 120_000)]


def test_a_commit_spark_deletes_while_it_is_read_is_left_out(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "commits").mkdir()
    (tmp_path / "commits" / "5").write_text("v1\n{}")
    os.utime(tmp_path / "commits" / "5", (1_800_000_000, 1_800_000_000))
    monkeypatch.setattr(soak, "log_batches", lambda checkpoint, log: [4, 5])  # 4 was listed, then deleted
    assert soak.commit_times(tmp_path) == [(5, 1.8e12)]
