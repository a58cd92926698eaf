"""What a detector's checkpoint fixes for its life: the number of state partitions, which its buckets must equal,
and the layout of its state.

Spark restores `spark.sql.shuffle.partitions` from a checkpoint's offset log, whatever the session says, while the
evaluator keys one bucket per configured partition (`BucketKeys` in the JVM). Run on a checkpoint of another count,
every bucket would look for its state under keys that hold none: no rules (the rules topic is not read again), no
windows. So the detector refuses to start instead.

A release that changes the state's layout also changes the type of the evaluator's grouping key, so Spark refuses a
checkpoint of an earlier layout when the query starts; restarting the query cannot change that, so the detector ends.
"""

from __future__ import annotations

import json
from pathlib import Path

PARTITIONS_CONF = "spark.sql.shuffle.partitions"


def log_batches(checkpoint_dir: Path, log: str) -> list[int]:
    """The batch numbers of the entries in one of the checkpoint's logs (`offsets` or `commits`), ascending; none
    when the log does not exist. Spark keeps only the last few (session.CHECKPOINT_DEFAULTS)."""
    directory = checkpoint_dir / log
    if not directory.is_dir():
        return []
    return sorted(int(entry.name) for entry in directory.iterdir() if entry.name.isdigit())


def _is_uri(checkpoint_dir: Path) -> bool:
    """Whether the checkpoint location is a URI (such as s3a://...) rather than a local path; Path folds its "//"."""
    return ":/" in str(checkpoint_dir)


def is_new(checkpoint_dir: Path) -> bool:
    """Whether no query has run on the checkpoint yet: a local location without a source's metadata (`sources/`,
    where Spark keeps each source's starting offsets from a query's first start) and without an entry in its offset
    or commit log. A URI is never new here, since its logs are not read from Python."""
    if _is_uri(checkpoint_dir) or (checkpoint_dir / "sources").exists():
        return False
    return not log_batches(checkpoint_dir, "offsets") and not log_batches(checkpoint_dir, "commits")


def seeds(checkpoint_dir: Path, starting_offsets: str) -> bool:
    """Whether the detector seeds this checkpoint before it starts Real-time Mode (pipeline.start_seeding): when it is
    new and its transactions start at `latest`, so the seeding is micro-batches of the rules alone. From `earliest` (or
    given offsets), or on a checkpoint a query has started on, there may be a backlog, which is left to Real-time
    Mode: one micro-batch of it could outlast a startup probe and be run again from its start after each restart."""
    return starting_offsets == "latest" and is_new(checkpoint_dir)


SEEDING_BATCHES = 12
"""How many micro-batches a seeding's rules are read in (pipeline.start_seeding): at most this many from the span
read at its start on the contract's one-partition rules topic. Spark's Kafka source gives each partition at least one
offset a batch, so a topic of many partitions may take more, and so may rules published after the span was read."""


def seeding_rules_per_batch(rules_offsets: int | None, batches: int = SEEDING_BATCHES) -> int | None:
    """The rules topic's offsets a seeding micro-batch reads at most, so that `rules_offsets` (the topic's span, end
    minus start over its partitions, read before the seeding starts) take `batches` micro-batches, or one per offset
    when there are fewer; None (no limit: one micro-batch) when the span could not be read or is 0. An empty topic
    may be filling as the seeding starts (a new install, its operator publishing the rules): limited to one offset a
    micro-batch, every rule published meanwhile would take a micro-batch of its own."""
    return None if not rules_offsets else max(1, -(-rules_offsets // batches))


def state_partitions(checkpoint_dir: Path) -> int | None:
    """The state partitions recorded in the newest readable entry of the checkpoint's offset log; None when there is
    none yet (a new checkpoint), or the checkpoint is not on a local filesystem (a URI such as s3a://...)."""
    if _is_uri(checkpoint_dir):
        return None
    offsets = checkpoint_dir / "offsets"
    for batch in reversed(log_batches(checkpoint_dir, "offsets")):
        lines = (offsets / str(batch)).read_text(encoding="utf-8", errors="replace").splitlines()
        try:
            conf = json.loads(lines[1])["conf"]
        except (IndexError, KeyError, TypeError, ValueError):
            continue  # an entry cut short by a crash: the one before it is what Spark restarts from
        value = conf.get(PARTITIONS_CONF)
        return int(value) if value is not None else None
    return None


def partitions_problem(checkpoint_dir: Path, shuffle_partitions: int) -> str | None:
    """Why the detector cannot run with `shuffle_partitions` on this checkpoint, or None when it can."""
    recorded = state_partitions(checkpoint_dir)
    if recorded is None or recorded == shuffle_partitions:
        return None
    return (
        f"the checkpoint {checkpoint_dir} has {recorded} state partitions, but --shuffle-partitions "
        f"(DETECTOR_SHUFFLE_PARTITIONS) is {shuffle_partitions}: the count is fixed for a checkpoint's life. Set it "
        f"to {recorded}, or start on a new checkpoint location (the rules are read again from their topic, the "
        "transactions from --starting-offsets)"
    )


# The error classes with which Spark refuses state written in another layout (a checkpoint of an earlier release).
INCOMPATIBLE_STATE_ERRORS = (
    "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE",
    "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE",
    "STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE",
)


def layout_problem(checkpoint_dir: Path | str, failure: str) -> str | None:
    """Why the query cannot run on this checkpoint, when `failure` (the query's error) is Spark refusing its state's
    layout; None for any other failure, which a restart from the checkpoint may cure."""
    refused = next((error for error in INCOMPATIBLE_STATE_ERRORS if f"[{error}]" in failure), None)
    if refused is None:
        return None
    return (
        f"the checkpoint {checkpoint_dir} holds state in another layout than this release's (Spark refused it: "
        f"{refused}); a checkpoint of an earlier release cannot be read. Start on a new checkpoint location (the rules "
        "are read again from their topic, the transactions from --starting-offsets)"
    )
