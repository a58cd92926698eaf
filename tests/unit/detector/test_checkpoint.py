"""The state partitions a checkpoint fixes, read from its offset log, and the refusal of another count; the end of
a detector whose checkpoint Spark refuses for its state's layout; whether a checkpoint is new (to be seeded), and
how many rules offsets each of the seeding's micro-batches reads."""

from __future__ import annotations

from pathlib import Path

from fraudstream_detector.checkpoint import (
    INCOMPATIBLE_STATE_ERRORS,
    is_new,
    layout_problem,
    partitions_problem,
    seeding_rules_per_batch,
    seeds,
    state_partitions,
)
from tests.checkpoints import offsets_entry


def test_a_new_checkpoint_fixes_nothing_yet(tmp_path: Path) -> None:
    assert state_partitions(tmp_path / "checkpoint") is None
    assert partitions_problem(tmp_path / "checkpoint", 4) is None


def test_the_newest_entry_gives_the_partitions(tmp_path: Path) -> None:
    offsets_entry(tmp_path, 0, 2)
    offsets_entry(tmp_path, 1, 2)
    (tmp_path / "offsets" / ".1.tmp").write_text("partial")
    assert state_partitions(tmp_path) == 2
    assert partitions_problem(tmp_path, 2) is None


def test_an_entry_cut_short_by_a_crash_falls_back_to_the_one_before(tmp_path: Path) -> None:
    offsets_entry(tmp_path, 9, 3)
    offsets_entry(tmp_path, 10, None, cut_short=True)
    assert state_partitions(tmp_path) == 3


def test_another_count_is_refused_naming_both_and_the_way_out(tmp_path: Path) -> None:
    offsets_entry(tmp_path, 0, 2)
    problem = partitions_problem(tmp_path, 4)
    assert problem is not None
    assert "has 2 state partitions" in problem
    assert "--shuffle-partitions (DETECTOR_SHUFFLE_PARTITIONS) is 4" in problem
    assert "new checkpoint location" in problem


def test_a_checkpoint_on_a_remote_filesystem_is_not_read(tmp_path: Path) -> None:
    assert state_partitions(Path("s3a://bucket/checkpoint")) is None


# How a query's failure reads when Spark refuses the state of an earlier layout (seen with a checkpoint of 3b023ae).
REFUSED = (
    "[STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE] Provided key schema does not match existing state key schema.\n"
    "Please check number and type of fields."
)


def test_a_state_layout_refusal_says_where_and_the_way_out() -> None:
    problem = layout_problem("/var/lib/detector/checkpoint", REFUSED)
    assert problem is not None
    assert "the checkpoint /var/lib/detector/checkpoint holds state in another layout" in problem
    assert "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE" in problem
    assert "new checkpoint location" in problem


def test_every_refusal_class_is_recognised_by_its_bracketed_name() -> None:
    for error in INCOMPATIBLE_STATE_ERRORS:
        assert layout_problem("ck", f"[{error}] some text") is not None
        assert layout_problem("ck", f"an error that mentions {error} without Spark's brackets") is None


def test_other_failures_are_left_to_the_restart() -> None:
    for failure in ("", "None", "[KAFKA_DATA_LOSS] some offsets were lost", "java.net.ConnectException: refused"):
        assert layout_problem("ck", failure) is None


def test_a_checkpoint_is_new_until_a_query_starts_on_it(tmp_path: Path) -> None:
    assert is_new(tmp_path / "not-yet-created")
    assert is_new(tmp_path)
    (tmp_path / "metadata").write_text('{"id":"q"}')  # the query's id alone: nothing read yet
    assert is_new(tmp_path)


def test_a_checkpoint_a_query_started_on_is_not_new(tmp_path: Path) -> None:
    sources = tmp_path / "sources" / "0"
    sources.mkdir(parents=True)  # a source's starting offsets, kept from the first start: a backlog may follow them
    assert not is_new(tmp_path)
    begun = tmp_path / "begun"
    offsets_entry(begun, 0, 2)  # a batch begun, not committed
    assert not is_new(begun)
    committed = tmp_path / "committed"
    (committed / "commits").mkdir(parents=True)
    (committed / "commits" / "0").write_text("v1\n{}")
    assert not is_new(committed)


def test_a_checkpoint_uri_is_never_new() -> None:
    assert not is_new(Path("s3a://bucket/checkpoints/detector"))


def test_only_a_new_checkpoint_whose_transactions_start_at_latest_is_seeded(tmp_path: Path) -> None:
    assert seeds(tmp_path, "latest")
    assert not seeds(tmp_path, "earliest")  # the backlog is Real-time Mode's
    assert not seeds(tmp_path, '{"transactions":{"0":42}}')
    (tmp_path / "commits").mkdir()
    (tmp_path / "commits" / "0").write_text("v1\n{}")
    assert not seeds(tmp_path, "latest")


def test_the_seeding_reads_the_rules_in_at_most_its_batches() -> None:
    for span in (1, 5, 11, 12, 13, 50, 1_000, 123_457):
        per_batch = seeding_rules_per_batch(span, batches=12)
        assert per_batch is not None and per_batch >= 1
        assert -(-span // per_batch) <= 12, "no more micro-batches than asked for"
        if per_batch > 1:
            assert -(-span // (per_batch - 1)) > 12, "the fewest offsets a micro-batch that keep to that"
    assert seeding_rules_per_batch(50, batches=12) == 5
    assert seeding_rules_per_batch(3, batches=12) == 1  # one a micro-batch: three


def test_a_span_that_could_not_be_read_or_an_empty_topic_seeds_in_one_micro_batch() -> None:
    assert seeding_rules_per_batch(None) is None
    assert seeding_rules_per_batch(0) is None  # rules published as the seeding starts: not one micro-batch each
