"""make soak's watcher against a real detector process: it finds the Spark JVM, switches its GC log on through jcmd
(with G1's liveness table after each marking), reads the checkpoint transitions and the state size from the checkpoint
location, and Spark's phases of each transition from the batches' progress the detector logs (and exports on its
/metrics); bench.run's `--cpu-by-thread` sampler tells that detector's task threads from the rest of its JVM. A
trickle of transactions keeps Real-time Mode's batches (5 s here) coming: a batch starts only when there is input."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from bench import cpu_by_thread, run, soak
from fraudstream_kafka.settings import KafkaSettings, Topics
from fraudstream_kafka.topics import ensure_contract_topics
from fraudstream_localstack.processes import wait_for
from tests.integration.detector.harness import Script, detector_process, sample

pytestmark = pytest.mark.integration


def test_the_soak_watches_a_real_detector(kafka_settings: KafkaSettings, unique_topics: Topics, tmp_path: Path) -> None:
    ensure_contract_topics(kafka_settings, unique_topics)
    checkpoint = tmp_path / "checkpoint"
    args = ["--checkpoint-interval", "5 seconds"]
    log = tmp_path / "detector.log"
    detector, url = detector_process(kafka_settings, unique_topics, checkpoint, log, extra_args=args)
    watcher = soak.Soak(sample_interval_s=1)
    threads = cpu_by_thread.Sampler()
    stop = threading.Event()

    def trickle() -> None:
        script = Script(kafka_settings, unique_topics, next_ts_ms=int(time.time() * 1000))
        while not stop.wait(0.5):
            now_ms = int(time.time() * 1000)
            tx = {"transactionId": f"t{now_ms}", "eventTime": now_ms, "payerId": "p", "paymentAmount": "1"}
            script.transaction(tx)

    producer = threading.Thread(target=trickle, daemon=True)
    producer.start()
    try:

        def evaluating() -> bool:
            detector.check_alive()
            return sample(url, "fraud_input_rows_total") >= 1

        wait_for(evaluating, 300, "the detector's first batch", interval_s=1)
        start_ms = time.time() * 1000
        threads.start()
        assert detector.pid is not None
        watcher.watch(run.Measurement(tmp_path, checkpoint, detector.pid, start_ms, 25))
        end_ms = time.time() * 1000
        threads.stop()
        batches_exported = sample(url, "fraud_batch_duration_seconds_count")
        # The detector's System.gc() is a concurrent cycle (session.GC_OPTIONS), so it ends with a liveness table.
        assert watcher.gc_log is not None and watcher.gc_log.exists(), watcher.gc_log_error
        jvm = soak.process_group_java(detector.pid)
        assert jvm is not None
        subprocess.run(["jcmd", str(jvm), "GC.run"], check=True, capture_output=True, timeout=60)
        gc_log = watcher.gc_log

        def marked() -> tuple[soak.Marking, soak.GcPause] | None:
            """The first marking whose cleanup pause was logged after its table, with that pause."""
            text = gc_log.read_text()
            pauses = soak.parse_gc_log(text)
            for marking in soak.parse_markings(text):
                after = [gc for gc in pauses if gc.at_ms >= marking.at_ms]
                if after:
                    return marking, after[0]
            return None

        wait_for(lambda: marked() is not None, 60, "a marking's liveness table and its cleanup", interval_s=0.5)
        marking, cleanup = marked() or pytest.fail("no marking")
    finally:
        threads.stop()
        stop.set()
        producer.join(30)
        detector.stop()
    assert 0 < marking.old_live_mb <= cleanup.heap_after_mb  # the live old generation is within the heap
    # One sample a second over the 25 s, less what a loaded machine takes from it (the watch's first jcmd among it).
    assert len(watcher.disk) >= 10 and watcher.disk[-1].state_bytes > 0
    report = watcher.report([], start_ms, end_ms)
    assert len(report["transitions"]) >= 2, watcher.commits  # a batch every 5 s
    assert all(t["stall_ms"] is None for t in report["transitions"])  # no alerts, so no silence to measure
    assert [m["state_disk_mb"] is not None for m in report["minutes"]] == [True]
    # Spark's phases come from the progress lines the detector logs (the last batch's may not be logged yet).
    assert [bool(t["spark_ms"]) for t in report["transitions"][:-1]] == [True] * (len(report["transitions"]) - 1)
    assert report["transitions"][0]["spark_ms"]["commitOffsets"] >= 0
    assert batches_exported >= len(report["transitions"]) - 1
    # bench.run --cpu-by-thread's sampler, on the same detector: it tells the JVM's threads apart by their names.
    used = {group: sum(w[group] for w in threads.report()["windows"]) for group in ("detector_jvm", "detector_tasks")}
    assert 0 < used["detector_tasks"] < used["detector_jvm"], used
