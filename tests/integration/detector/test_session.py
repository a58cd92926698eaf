"""The detector's SparkSession writes its checkpoints through Hadoop's local file system without forked commands
(session.LOCAL_FILE_SYSTEM): each of Hadoop's two APIs resolves the file: scheme to the evaluator jar's classes, in the
JVM that runs the query. What the classes do is the JVM's ForklessLocalFileSystemTest; what they save, BENCHMARKS.md.
The JVM that runs the query also runs with the detector's garbage collector settings (session.GC_OPTIONS), and a
stopped session (session.stop_session) leaves none of its JVM's temporary files behind, and a driver that is killed
leaves no JVM behind."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fraudstream_detector.session import GC_OPTIONS, LOCAL_FILE_SYSTEM
from fraudstream_localstack.node_host import ProcessInfo, process_info
from fraudstream_localstack.processes import wait_for

pytestmark = pytest.mark.integration


def test_both_hadoop_apis_resolve_the_file_scheme_to_the_forkless_file_system(spark: Any, tmp_path: Path) -> None:
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    uri = jvm.java.net.URI(tmp_path.as_uri())
    file_context = jvm.org.apache.hadoop.fs.FileContext.getFileContext(uri, conf).getDefaultFileSystem()
    file_system = jvm.org.apache.hadoop.fs.FileSystem.get(uri, conf)
    assert file_context.getClass().getName() == LOCAL_FILE_SYSTEM["spark.hadoop.fs.AbstractFileSystem.file.impl"]
    assert file_system.getClass().getName() == LOCAL_FILE_SYSTEM["spark.hadoop.fs.file.impl"]
    assert file_system.getRaw().getClass().getName() == "io.fraudstream.evaluator.hadoop.ForklessRawLocalFileSystem"


def test_a_checkpoint_file_written_through_it_reads_back_with_its_checksum(spark: Any, tmp_path: Path) -> None:
    jvm = spark._jvm
    checkpointing = jvm.org.apache.spark.sql.execution.streaming.checkpointing
    manager = getattr(getattr(checkpointing, "CheckpointFileManager$"), "MODULE$").create(
        jvm.org.apache.hadoop.fs.Path(tmp_path.as_uri()), spark._jsc.hadoopConfiguration()
    )
    target = jvm.org.apache.hadoop.fs.Path(f"{tmp_path.as_uri()}/0")
    out = manager.createAtomic(target, True)
    out.write(bytearray(b"v1\n{}"))
    out.close()
    assert (tmp_path / "0").read_bytes() == b"v1\n{}"
    assert (tmp_path / ".0.crc").is_file()
    assert oct((tmp_path / "0").stat().st_mode & 0o777) == oct(0o644)


def test_the_jvm_that_evaluates_runs_with_the_garbage_collector_settings(spark: Any) -> None:
    jvm = spark._jvm
    diagnostics = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean")
    )
    assert "G1" in jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()[0].getName()
    for option in GC_OPTIONS:
        parsed = re.fullmatch(r"-XX:(?:(?P<sign>[+-])(?P<switch>\w+)|(?P<flag>\w+)=(?P<value>\S+))", option)
        assert parsed is not None, option
        name = parsed["switch"] or parsed["flag"]
        expected = {"+": "true", "-": "false"}[parsed["sign"]] if parsed["sign"] else parsed["value"]
        assert diagnostics.getVMOption(name).getValue() == expected, option


# The start of a driver of its own, as the detector runs it: builds the session and runs a query with RocksDB state
# until a batch has read input.
_RUNNING_QUERY = """
import json, subprocess, sys, time
from pyspark import SparkContext
from pyspark.sql import functions as F
from fraudstream_detector.session import build_session, stop_session, scratch_dir

spark = build_session("driver", master="local[2]")
query = (
    spark.readStream.format("rate").option("rowsPerSecond", 100).load()
    .groupBy((F.col("value") % 10).alias("key")).count()
    .writeStream.outputMode("update").format("noop").option("checkpointLocation", sys.argv[1]).start()
)
deadline = time.monotonic() + 120
while not (query.lastProgress or {}).get("numInputRows") and time.monotonic() < deadline:
    time.sleep(0.2)
"""
# Then lists what its JVM put in its temporary directory, and stops the session.
_DRIVER = (
    _RUNNING_QUERY
    + """
progress = query.lastProgress
scratch = scratch_dir()
held = sorted(p.name for p in scratch.iterdir()) if scratch else []
query.stop()
stop_session(spark)
print(json.dumps({"progress": progress, "scratch": str(scratch), "held": held}, default=str))
"""
)


def test_a_stopped_session_leaves_no_temporary_files(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _DRIVER, str(tmp_path / "checkpoint")],
        env={**os.environ, "TMPDIR": str(temp)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["progress"]["numInputRows"] > 0
    assert report["progress"]["stateOperators"][0]["customMetrics"]["rocksdbCommitFlushLatency"] >= 0  # RocksDB
    assert Path(report["scratch"]).parent == temp
    # While it ran, the JVM kept its local directories and RocksDB's native library there.
    assert any(name.startswith("spark-") for name in report["held"]), report["held"]
    assert any(name.startswith("librocksdbjni") for name in report["held"]), report["held"]
    assert list(temp.iterdir()) == []


# Or prints its JVM's process id and that of a child that holds the JVM's input open, as a stand-in for an exit that
# does not come (a detector JVM whose driver and broker were killed was still there, idle, five minutes later; why
# was not found: it answered neither jstack nor SIGQUIT), and waits to be killed.
_KILLED_DRIVER = (
    _RUNNING_QUERY
    + """
jvm = SparkContext._gateway.proc
holder = subprocess.Popen(["sleep", "600"], pass_fds=[jvm.stdin.fileno()])
print(jvm.pid, holder.pid, flush=True)
time.sleep(600)
"""
)


def test_the_jvm_of_a_killed_driver_does_not_outlive_it(tmp_path: Path) -> None:
    log_path = tmp_path / "driver.log"
    with log_path.open("w") as log:
        driver = subprocess.Popen(
            [sys.executable, "-c", _KILLED_DRIVER, str(tmp_path / "checkpoint")],
            env={**os.environ, "TMPDIR": str(tmp_path)},
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    processes: list[ProcessInfo] = []
    try:
        assert driver.stdout is not None
        line = driver.stdout.readline()
        assert re.fullmatch(r"\d+ \d+\n", line), log_path.read_text()[-3000:]
        started = [process_info(int(pid)) for pid in line.split()]
        processes = [info for info in started if info is not None]
        assert len(processes) == 2 and processes[0].alive(), started
        jvm = processes[0]
        driver.send_signal(signal.SIGKILL)  # no handler, no finally: the session is left running
        driver.wait(timeout=10)
        wait_for(lambda: not jvm.alive(), 30, "the killed driver's JVM to end")
    finally:
        driver.kill()
        driver.wait(timeout=10)
        if driver.stdout is not None:
            driver.stdout.close()
        for info in processes:
            if info.alive():
                os.kill(info.pid, signal.SIGKILL)
