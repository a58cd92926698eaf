"""Where things live in a checkout, and the pinned versions from `versions.env`."""

from __future__ import annotations

import functools
import shlex
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"
BIN = CACHE / "bin"
KAFKA_LIBS = CACHE / "kafka" / "libs"
SPARK_JARS = CACHE / "spark-jars"
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
