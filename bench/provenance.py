"""What code a benchmark run measured, recorded in its result beside the machine's facts.

A result without it cannot be told apart from one of another commit, and an A/B run of two evaluator jars
(FRAUDSTREAM_EVALUATOR_JAR) from one of the checkout's own: `bench.sweep` and a long soak start detectors minutes
apart, and the checkout's jar is rebuilt whenever services/evaluator changes in between.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from fraudstream_localstack.layout import ROOT


def checkout(root: Path = ROOT) -> dict[str, object]:
    """`commit`: the HEAD of the git checkout at `root`, and `changed_files`: how many of its files differ from it
    (`git status --porcelain`: changed, staged, new and untracked files; ignored ones not); both None where `root`
    is not a git checkout or git is missing."""
    try:
        commit = _git(root, "rev-parse", "HEAD").strip()
        changed = len(_git(root, "status", "--porcelain").splitlines())
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "changed_files": None}
    return {"commit": commit, "changed_files": changed}


def jar(path: Path | None) -> dict[str, object]:
    """`evaluator_jar`: the evaluator jar the detector loaded, and `evaluator_jar_sha256`: its content's SHA-256 as
    read now; both None where the target runs an image's jar (`make bench`'s deployed target)."""
    if path is None:
        return {"evaluator_jar": None, "evaluator_jar_sha256": None}
    return {"evaluator_jar": str(path), "evaluator_jar_sha256": hashlib.sha256(path.read_bytes()).hexdigest()}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout
