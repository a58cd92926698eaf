"""The state partitions a checkpoint fixes, read from its offset log, and the refusal of another count."""

from __future__ import annotations

from pathlib import Path

from fraudstream_detector.checkpoint import partitions_problem, state_partitions
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
