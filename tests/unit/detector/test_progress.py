"""What the detector makes of a batch's progress: its metrics, and the log line `make soak` reads back."""

from __future__ import annotations

import copy
import logging
import math
from typing import Any

import pytest
from prometheus_client import REGISTRY

from bench.soak import parse_batch_progress
from fraudstream_detector.pipeline import record_progress

# A StreamingQueryProgress as Spark's `json()` writes it, cut to the fields the detector reads and a few others.
PROGRESS: dict[str, Any] = {
    "id": "5c3e4b8e-0d4f-4a52-9a39-2f0f8c8b1d11",
    "batchId": 7,
    "numInputRows": 60306,
    "durationMs": {
        "addBatch": 59410,
        "commitOffsets": 6,
        "latestOffset": 1,
        "queryPlanning": 212,
        "triggerExecution": 59702,
        "walCommit": 9,
    },
    "stateOperators": [
        {
            "operatorName": "transformWithStateExec",
            "numRowsTotal": 120000,
            "commitTimeMs": 31,
            "memoryUsedBytes": 4096,
            "customMetrics": {"rocksdbCommitFlushLatency": 12, "rocksdbSstFileSize": 900},
        },
        {"operatorName": "transformWithStateExec", "numRowsTotal": 50, "commitTimeMs": 14, "memoryUsedBytes": 1024},
    ],
    "sources": [],
}


def sample(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def test_a_batch_is_exported_as_its_duration_phases_and_state() -> None:
    batches_before = sample("fraud_batch_duration_seconds_count") or 0.0
    record_progress(PROGRESS)
    assert sample("fraud_batch_duration_seconds_count") == batches_before + 1
    assert sample("fraud_batch_phase_seconds", phase="queryPlanning") == pytest.approx(0.212)
    assert sample("fraud_batch_phase_seconds", phase="triggerExecution") == pytest.approx(59.702)
    assert sample("fraud_batch_phase_seconds", phase="stateCommit") == pytest.approx(0.045)
    assert sample("fraud_state_rows") == 120050
    assert sample("fraud_state_memory_used_bytes") == 5120


def test_the_logged_line_reads_back_as_the_same_batch(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="fraudstream_detector.pipeline"):
        record_progress(PROGRESS)
    (batch,) = parse_batch_progress("\n".join(f"INFO {r.getMessage()}" for r in caplog.records)).values()
    assert batch.batch == 7
    assert batch.durations_ms == {k: float(v) for k, v in PROGRESS["durationMs"].items()}
    assert batch.operators == [(31.0, {"rocksdbCommitFlushLatency": 12.0, "rocksdbSstFileSize": 900.0}), (14.0, {})]


def test_a_batch_without_a_trigger_time_or_state_is_still_exported() -> None:
    batches_before = sample("fraud_batch_duration_seconds_count") or 0.0
    record_progress({"batchId": 0, "numInputRows": 0, "durationMs": {"latestOffset": 3}, "stateOperators": []})
    assert sample("fraud_batch_duration_seconds_count") == batches_before
    assert sample("fraud_batch_phase_seconds", phase="latestOffset") == pytest.approx(0.003)
    assert sample("fraud_batch_phase_seconds", phase="stateCommit") == 0.0
    assert sample("fraud_state_rows") == 0


def test_a_store_that_does_not_count_its_rows_leaves_the_row_count_unknown() -> None:
    uncounted = copy.deepcopy(PROGRESS)
    uncounted["stateOperators"][0]["numRowsTotal"] = -1  # RocksDB without trackTotalNumberOfRows
    record_progress(uncounted)
    rows = sample("fraud_state_rows")
    assert rows is not None and math.isnan(rows)
    assert sample("fraud_state_memory_used_bytes") == 5120
