"""Building the SparkSession: the Kafka connector jars from `.cache/spark-jars`, local-friendly defaults.

Nothing is resolved when a job starts: the jars were resolved by Maven at install time (scripts/provision.sh).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import pyspark
from pyspark import SparkContext
from pyspark.sql import SparkSession

from fraudstream_detector.parent_death import launched_jvm_dies_with_this_process

LOG4J2_CONFIG = Path(__file__).with_name("log4j2.properties")
# The garbage collector settings of the JVMs that evaluate:
# - a G1 pause goal of 50 ms instead of 200: the evaluator's window cache keeps up to a quarter of the heap in
#   long-lived objects, and at the 200 ms goal G1 paused 130-200 ms every ~2 s, each pause straight into the latency;
# - the old regions of a mixed phase spread over 64 collections instead of 8: G1 evacuates at least 1/target of its
#   candidate regions in each mixed collection whatever the pause goal, and at 8, with the cache's 1.5-2 GB of old
#   garbage to reclaim every 3-5 minutes, each phase paused 8 times for a median 117 ms and up to 341 ms; at 64 the
#   soak's pauses over 150 ms went from 63 to 32 in the hour, at the same total (docs/BENCHMARKS.md);
# - System.gc() as a concurrent cycle: Spark's ContextCleaner calls it every 30 minutes
#   (spark.cleaner.periodicGC.interval), which stopped the stream for a 1.8 s full collection.
GC_OPTIONS = ("-XX:MaxGCPauseMillis=50", "-XX:G1MixedGCCountTarget=64", "-XX:+ExplicitGCInvokesConcurrent")
JVM_OPTIONS = " ".join([f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}", *GC_OPTIONS])
# Checkpoint settings the detector changes from Spark's defaults, unless spark-defaults.conf or the caller sets them.
# History: Spark keeps the last 100 batches and snapshots the state every 10th, i.e. 8 hours of changelogs at
# 5-minute batches, so the state on disk grew with every batch of a run whatever its windows. A restart reads back
# only the last committed batch; these keep the last 3 and a snapshot every 3rd, about 5 batches of changelogs.
# RocksDB's write buffer: a snapshot first flushes the memtables, inside the commit; at RocksDB's 64 MiB buffers that
# flush took 0.8 s of a transition, at 8 MiB 40-90 ms (the rest is flushed in the background as the batch runs); at
# 2 MiB the snapshot commits were ~30 ms shorter still, and the stalls over 500 ms and the late alerts fewer, in each
# of three pairs of runs (docs/BENCHMARKS.md, "Two-MiB write buffers").
# Counting the store's rows makes every put and delete read its key first: a quarter of the evaluating tasks' CPU at
# 500 tx/s. Without it, Spark reports -1 rows and fraud_state_rows is NaN.
# Format version 2 is the only one Real-time Mode runs on; it chooses it by itself, but a micro-batch query does not,
# and the seeding run (pipeline.start_seeding) writes the checkpoint the Real-time Mode query continues.
CHECKPOINT_DEFAULTS = {
    "spark.sql.streaming.stateStore.checkpointFormatVersion": "2",
    "spark.sql.streaming.minBatchesToRetain": "3",
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "3",
    "spark.sql.streaming.stateStore.rocksdb.writeBufferSizeMB": "2",
    "spark.sql.streaming.stateStore.rocksdb.trackTotalNumberOfRows": "false",
}
# Hadoop's local file system without forked commands (io.fraudstream.evaluator.hadoop, in the evaluator jar): without
# Hadoop's native library, which pyspark does not ship, each checkpoint file (offsets, commits, state
# changelogs) cost ten `chmod`/`readlink` processes and ~50 ms, ~3 ms without them. Both of Hadoop's APIs, FileSystem
# and FileContext (Spark's checkpoint file manager), for the file: scheme; Hadoop resolves the scheme before Spark
# adds spark.jars, so the jars go on the JVMs' class path (all of them: a class there sees no jar of spark.jars).
LOCAL_FILE_SYSTEM = {
    "spark.hadoop.fs.file.impl": "io.fraudstream.evaluator.hadoop.ForklessLocalFileSystem",
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "io.fraudstream.evaluator.hadoop.ForklessLocalFs",
}
# The temporary directory of the JVM this process launched (build_session), which stop_session removes.
_scratch: Path | None = None
_JAR_VERSION = re.compile(r"-\d+(?:\.\d+)+[\w.\-]*\.jar$")


def _artifact(jar: Path) -> str:
    return _JAR_VERSION.sub("", jar.name)


def connector_jars(jar_dir: Path | None = None) -> list[Path]:
    """The connector jars that pyspark does not already ship (a second scala-library or hadoop would clash).

    Raises FileNotFoundError naming the provisioning step when the jars are missing.
    """
    if jar_dir is None:
        jar_dir = Path(
            os.environ.get("FRAUDSTREAM_SPARK_JARS", Path(__file__).resolve().parents[2] / ".cache" / "spark-jars")
        )
    jars = sorted(jar_dir.glob("*.jar"))
    if not any(_artifact(j) == "spark-sql-kafka-0-10_2.13" for j in jars):
        raise FileNotFoundError(f"no Spark Kafka connector in {jar_dir}; run: scripts/provision.sh spark-jars")
    shipped = {_artifact(j) for j in pyspark_jars().glob("*.jar")}
    return [j for j in jars if _artifact(j) not in shipped]


def pyspark_jars() -> Path:
    """The jars directory of the pyspark this interpreter imports: the Spark this detector runs on. In a checkout that
    is the .venv's, which `scripts/provision.sh evaluator` builds the evaluator against (the image build names the
    same jars through PYSPARK_JARS_DIR)."""
    return Path(pyspark.__file__).parent / "jars"


def evaluator_jar() -> Path:
    """The JVM evaluator's jar: the one FRAUDSTREAM_EVALUATOR_JAR names when it is set and not empty, else the
    checkout's (built from services/evaluator by scripts/provision.sh evaluator).

    Raises FileNotFoundError naming the provisioning step when it is missing.
    """
    default = Path(__file__).resolve().parents[2] / ".cache" / "evaluator" / "fraudstream-evaluator.jar"
    jar = Path(os.environ.get("FRAUDSTREAM_EVALUATOR_JAR") or default)
    if not jar.is_file():
        raise FileNotFoundError(f"no JVM evaluator jar at {jar}; run: scripts/provision.sh evaluator")
    return jar


def build_session(
    app_name: str,
    master: str = "local[2]",
    shuffle_partitions: int = 2,
    conf: Mapping[str, str] | None = None,
) -> SparkSession:
    """A SparkSession with the Kafka connector, the JVM evaluator, RocksDB state with changelog checkpointing, no UI,
    Hadoop's local file system without forks (LOCAL_FILE_SYSTEM), and CHECKPOINT_DEFAULTS for each of its settings
    that neither `conf` nor spark-defaults.conf gives.

    A driver JVM this call launches keeps its temporary files (java.io.tmpdir: Spark's local directories unless
    spark.local.dir or SPARK_LOCAL_DIRS name others, RocksDB's working directories and native library) in a directory
    of its own under the process's temporary directory (TMPDIR); stop_session removes it. That JVM dies with the thread
    that calls this (parent_death.launched_jvm_dies_with_this_process), so call it from one that lives as long as the
    session: the main thread."""
    global _scratch
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    driver_options = JVM_OPTIONS
    launches = SparkContext._gateway is None
    if launches:
        if _scratch is not None:  # a launch that failed
            shutil.rmtree(_scratch, ignore_errors=True)
        _scratch = Path(tempfile.mkdtemp(prefix="fraudstream-spark-"))
        driver_options = f"{JVM_OPTIONS} -Djava.io.tmpdir={_scratch}"
    jars = [str(j) for j in [*connector_jars(), evaluator_jar()]]
    class_path = os.pathsep.join(jars)
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master)
        .config("spark.jars", ",".join(jars))
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config(
            "spark.sql.streaming.stateStore.providerClass",
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        )
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.locality.wait", "0")
        # Batches run only for new records: the state sweep's processing-time timers would otherwise keep the
        # query running empty batches back to back.
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # Real-time Mode's streaming shuffle holds a partly filled network buffer up to this long before it sends it
        # (Spark's default: 50 ms). Below a few thousand records a second the buffers never fill, so every hop would
        # wait out the timer: at 1 000 tx/s and two hops that was most of the alert latency (docs/BENCHMARKS.md).
        .config("spark.shuffle.streaming.networkBufferMaxWaitTimeMs", "2")
        .config("spark.driver.extraJavaOptions", driver_options)
        .config("spark.executor.extraJavaOptions", JVM_OPTIONS)
        .config("spark.driver.extraClassPath", class_path)
        .config("spark.executor.extraClassPath", class_path)
    )
    for key, value in {**LOCAL_FILE_SYSTEM, **(conf or {})}.items():
        builder = builder.config(key, value)
    with launched_jvm_dies_with_this_process() if launches else contextlib.nullcontext():
        session = builder.getOrCreate()
    for key, value in CHECKPOINT_DEFAULTS.items():
        if session.conf.get(key, None) is None:
            session.conf.set(key, value)
    session.sparkContext.setLogLevel("WARN")
    return session


def scratch_dir() -> Path | None:
    """The temporary directory of the JVM that build_session launched and stop_session has not yet stopped."""
    return _scratch


def stop_session(spark: SparkSession, timeout_s: float = 60.0) -> None:
    """Stops `spark`; then, if build_session launched its JVM, that JVM too, waiting up to `timeout_s` for it to exit
    (killed after that), and removes the JVM's temporary directory. Spark deletes only some of its temporary files on
    exit, and none when the JVM is killed, so without this every run left its local directories, RocksDB's working
    directories and a copy of RocksDB's native library in /tmp. A later build_session launches a new JVM."""
    global _scratch
    gateway = SparkContext._gateway
    spark.stop()
    proc: subprocess.Popen[bytes] | None = getattr(gateway, "proc", None)
    if gateway is None or proc is None or _scratch is None:
        return
    gateway.shutdown()
    if proc.stdin is not None:
        proc.stdin.close()  # Spark's gateway server exits (and runs its shutdown hooks) at the end of its input
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    SparkContext._gateway = None
    SparkContext._jvm = None
    shutil.rmtree(_scratch, ignore_errors=True)
    _scratch = None
