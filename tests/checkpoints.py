"""Detector checkpoints as Spark writes them, for tests of what the detector reads from one."""

from __future__ import annotations

import json
from pathlib import Path


def offsets_entry(checkpoint: Path, batch: int, partitions: int | None, *, cut_short: bool = False) -> None:
    """Writes offset-log entry `batch` as Spark does: a version line, the batch metadata with its conf, the offsets."""
    offsets = checkpoint / "offsets"
    offsets.mkdir(parents=True, exist_ok=True)
    conf = {} if partitions is None else {"spark.sql.shuffle.partitions": str(partitions)}
    metadata = json.dumps({"batchWatermarkMs": 0, "batchTimestampMs": 1, "conf": conf})
    text = "v1\n" + (metadata[:20] if cut_short else metadata + '\n{"transactions":{"0":5}}')
    (offsets / str(batch)).write_text(text)
