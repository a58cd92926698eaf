"""What code a benchmark run measured, recorded in its result beside the machine's facts.

A result without it cannot be told apart from one of another commit, and an A/B run of two evaluator jars
(FRAUDSTREAM_EVALUATOR_JAR) from one of the checkout's own: `bench.sweep` starts a detector for each step, minutes
apart, and the checkout's jar is rebuilt before a start whenever services/evaluator changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

from fraudstream_localstack.layout import ROOT

# What a benchmark run writes into the checkout itself (its result, plot and row in docs/BENCHMARKS.md), and the
# docs beside it: not code, so not counted as a change from the commit.
NOT_CODE = ("bench/results", "docs")
GIT_TIMEOUT_S = 30.0
# Variables that would point git at another repository, index or work tree than `root`'s, whatever -C says.
GIT_LOCATION_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")
# What chooses a local detector's JVM and adds to its options, besides the code: pyspark runs $JAVA_HOME/bin/java
# and passes SPARK_SUBMIT_OPTS to the driver's JVM.
JVM_ENV = ("JAVA_HOME", "SPARK_SUBMIT_OPTS")


class Checkout(TypedDict):
    """The checkout a run measured (`checkout`)."""

    commit: str | None
    changed_files: int | None


class Runnable(TypedDict):
    """What the detector ran (`runnable`)."""

    evaluator_jar: str | None
    evaluator_jar_sha256: str | None
    image: str | None
    detector_jvm: dict[str, str | None] | None


class Code(Checkout, Runnable):
    """A result's `code` record: the checkout and what the detector ran."""


UNKNOWN_CHECKOUT: Checkout = {"commit": None, "changed_files": None}


def code(ran: Runnable, root: Path = ROOT) -> Code:
    """The `code` record of a run whose detector ran `ran`, from the checkout whose top is `root`, read now."""
    return {**checkout(root), **ran}


def checkout(root: Path = ROOT) -> Checkout:
    """`commit`: the HEAD of the git checkout whose top is `root`, and `changed_files`: how many of its files,
    outside NOT_CODE, differ from it (changed, staged, deleted, new or untracked; ignored ones not). Both None where
    `root` is not the top of a git checkout, or git is missing or fails."""
    try:
        if Path(_git(root, "rev-parse", "--show-toplevel").strip()).resolve() != root.resolve():
            return UNKNOWN_CHECKOUT.copy()  # `root` lies inside another repository
        commit = _git(root, "rev-parse", "HEAD").strip()
        excluded = [f":(exclude){path}" for path in NOT_CODE]
        status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", ".", *excluded)
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN_CHECKOUT.copy()
    return {"commit": commit, "changed_files": len(status.splitlines())}


def runnable(jar: Path | None = None, image: str | None = None, env: Mapping[str, str] | None = None) -> Runnable:
    """What the detector ran: `evaluator_jar`, the evaluator jar it loaded, with `evaluator_jar_sha256`, its
    content's SHA-256 as read now (None when it cannot be read), or `image`, the container image a deployed
    detector runs (its jar inside it); and `detector_jvm`, the JVM_ENV variables of `env`, the environment a local
    detector inherits, which choose its JVM and add to its options (an A/B run's arms). What is not known is None."""
    digest: str | None = None
    if jar is not None:
        with contextlib.suppress(OSError):
            digest = hashlib.sha256(jar.read_bytes()).hexdigest()
    return {
        "evaluator_jar": None if jar is None else str(jar),
        "evaluator_jar_sha256": digest,
        "image": image,
        "detector_jvm": None if env is None else {name: env.get(name) for name in JVM_ENV},
    }


def _git(root: Path, *args: str) -> str:
    # No optional locks: a benchmark must not take .git/index.lock from under the developer's own git commands.
    command = ["git", "--no-optional-locks", "-c", f"safe.directory={root}", "-C", str(root), *args]
    env = {name: value for name, value in os.environ.items() if name not in GIT_LOCATION_ENV}
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=GIT_TIMEOUT_S, env=env).stdout
