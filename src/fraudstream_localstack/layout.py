"""Where things live in a checkout, the pinned versions from `versions.env`, and the evaluator jar a checkout runs."""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

from fraudstream_detector.parent_death import die_with_parent

from .processes import stop_process_group

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"
BIN = CACHE / "bin"
KAFKA_LIBS = CACHE / "kafka" / "libs"
SPARK_JARS = CACHE / "spark-jars"
EVALUATOR_JAR = CACHE / "evaluator" / "fraudstream-evaluator.jar"
# The evaluator's test classes (the cross-language Harness, the cost driver): built beside it, never shipped.
EVALUATOR_TESTS_JAR = CACHE / "evaluator" / "fraudstream-evaluator-tests.jar"
LOCAL = ROOT / ".local"
CONFIG = ROOT / "scripts" / "config"


class MissingArtifactError(RuntimeError):
    """A binary or jar that `scripts/provision.sh` installs is absent."""


@functools.cache
def versions() -> dict[str, str]:
    """The KEY=value pins of `versions.env`."""
    pins: dict[str, str] = {}
    for line in (ROOT / "versions.env").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            pins[key] = value
    return pins


class EvaluatorBuildError(RuntimeError):
    """`scripts/provision.sh evaluator` failed, took too long, or did not leave the evaluator's jars."""


def build_evaluator(timeout_s: float = 600) -> Path:
    """EVALUATOR_JAR as built from the checkout's services/evaluator as it is now, EVALUATOR_TESTS_JAR beside it:
    `scripts/provision.sh evaluator` rebuilds both when the sources, the pins or the Spark jars changed since the
    last build (15 s here), and otherwise only compares its stamp (about half a second); it first waits for a
    build another process runs. The step also runs the steps it depends on (the Python environment, the Spark jars),
    which may install. Its output goes to this process's stderr. Raises EvaluatorBuildError when it fails or leaves
    no jars, or after `timeout_s` (its wait included). Then, and when this process is interrupted, the build's whole
    process group is stopped (processes.stop_process_group); it also dies with this process."""
    build = subprocess.Popen(
        [str(ROOT / "scripts" / "provision.sh"), "evaluator"],
        cwd=ROOT,
        stdout=2,  # this process's stderr, whatever sys.stderr was replaced by
        start_new_session=True,
        preexec_fn=die_with_parent,
    )
    try:
        code = build.wait(timeout=timeout_s)
    except BaseException as exc:  # the timeout, or Ctrl-C: Maven's JVM must not outlive the build
        stop_process_group(build, grace_s=5.0)
        if isinstance(exc, subprocess.TimeoutExpired):
            raise EvaluatorBuildError(f"scripts/provision.sh evaluator took over {timeout_s:g} s; stopped") from None
        raise
    if code != 0 or not EVALUATOR_JAR.is_file() or not EVALUATOR_TESTS_JAR.is_file():
        raise EvaluatorBuildError(f"scripts/provision.sh evaluator failed (exit {code}); see its output")
    return EVALUATOR_JAR


def evaluator_to_run() -> Path:
    """The evaluator jar a detector started from this checkout loads: the one FRAUDSTREAM_EVALUATOR_JAR names (set and
    not empty; a relative name from ROOT, where the stack runs the detector), run as it is (the image's, or an older
    build for an A/B run), else EVALUATOR_JAR after build_evaluator."""
    named = os.environ.get("FRAUDSTREAM_EVALUATOR_JAR")
    return ROOT / named if named else build_evaluator()


def require(path: Path, step: str) -> Path:
    """`path` if it exists, else an error that names it and the provisioning step that installs it."""
    if not path.exists():
        raise MissingArtifactError(f"{path} is missing; install it with: scripts/provision.sh {step} (or make install)")
    return path


def write_env_file(path: Path, env: Mapping[str, str]) -> None:
    """`export KEY=value` lines for `source`, values shell-quoted, readable by the owner only (stack.env holds the
    admin's password on a secured broker). Written whole (a temporary file renamed), since `make up` and
    `make k8s-up` take the file's existence to mean ready."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.touch(mode=0o600)
    tmp.chmod(0o600)
    tmp.write_text("".join(f"export {key}={shlex.quote(value)}\n" for key, value in env.items()))
    tmp.replace(path)
