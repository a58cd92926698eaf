"""What code a benchmark run measured: the checkout's commit and changes, the evaluator jar's checksum (a real git
in a scratch repository), and how the table's label column shows them."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from bench import provenance
from bench.run import _code_note


def git(root: Path, *args: str) -> str:
    command = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip()


def test_a_checkout_is_named_by_its_head_and_the_files_that_differ_from_it(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "tracked.py").write_text("a = 1\n")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "first")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert provenance.checkout(tmp_path) == {"commit": head, "changed_files": 0}

    (tmp_path / "tracked.py").write_text("a = 2\n")
    (tmp_path / "new.py").write_text("b = 1\n")
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "result.json").write_text("{}\n")
    assert provenance.checkout(tmp_path) == {"commit": head, "changed_files": 2}


def test_outside_a_checkout_the_commit_is_unknown_not_an_error(tmp_path: Path) -> None:
    assert provenance.checkout(tmp_path) == {"commit": None, "changed_files": None}


def test_the_jar_is_named_with_its_contents_checksum(tmp_path: Path) -> None:
    jar = tmp_path / "evaluator.jar"
    jar.write_bytes(b"PK\x03\x04 not really a jar")
    assert provenance.jar(jar) == {
        "evaluator_jar": str(jar),
        "evaluator_jar_sha256": hashlib.sha256(b"PK\x03\x04 not really a jar").hexdigest(),
    }
    assert provenance.jar(None) == {"evaluator_jar": None, "evaluator_jar_sha256": None}


@pytest.mark.parametrize(
    ("code", "note"),
    [(None, ""),
     ({"commit": None, "changed_files": None, "evaluator_jar": None, "evaluator_jar_sha256": None}, ""),
     ({"commit": "f3f133f0123", "changed_files": 0, "evaluator_jar": None, "evaluator_jar_sha256": None},
      "[at f3f133f]"),
     ({"commit": "f3f133f0123", "changed_files": 3, "evaluator_jar": "/x.jar", "evaluator_jar_sha256": "ab" * 32},
      "[at f3f133f; 3 files changed; evaluator abababababab]")],
)  # fmt: skip
def test_the_label_column_names_the_code_measured(code: object, note: str) -> None:
    assert _code_note({"code": code} if code is not None else {}) == note
