"""Where things live in a checkout, and the pinned versions from `versions.env`."""

from __future__ import annotations

import functools
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

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
    """`scripts/provision.sh evaluator` failed, or did not leave the evaluator's jars."""


def build_evaluator() -> Path:
    """EVALUATOR_JAR as built from the checkout's services/evaluator as it is now, EVALUATOR_TESTS_JAR beside it:
    `scripts/provision.sh evaluator` rebuilds both when the sources, the pins or the Spark jars changed since the
    last build, and otherwise only compares its stamp. Raises EvaluatorBuildError with the build's output."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "provision.sh"), "evaluator"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0 or not EVALUATOR_JAR.is_file() or not EVALUATOR_TESTS_JAR.is_file():
        raise EvaluatorBuildError(
            f"scripts/provision.sh evaluator failed (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
        )
    return EVALUATOR_JAR


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
